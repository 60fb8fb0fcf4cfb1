// The record-rewrite path with a per-record transform (core/rewrite.ts, what `journal redact`, `encrypt` and
// `rekey` will take) is all or nothing under kill -9 on a data directory: SIGKILL before the rename leaves the old
// journal byte for byte, after it the new one whole; either checks healthy, and the next rewrite quarantines
// the temp file a crash left. (On PostgreSQL the rewrite is one transaction: conformance-core covers a refusal.)
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { buildSync } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { DataDir } from '../../src/journal/dir/data-dir';
import { rewriteRecords } from '../../src/journal/core/rewrite';
import { freshDataDir, tempDir } from '../helpers/cli';
import { ITEM_STORE, puts } from '../unit/journal/fixtures';

const TS = '2026-11-29T21:00:00.000Z';
const src = resolve(__dirname, '../../src');
let script = '';

/** A child that rewrites journal `items.jsonl` of the data directory argv[2], setting every value to "redacted". */
beforeAll(() => {
  const dir = tempDir();
  const entry = join(dir, 'rewrite.ts');
  fs.writeFileSync(
    entry,
    `import { DataDir } from ${JSON.stringify(join(src, 'journal/dir/data-dir'))};
import { rewriteRecords } from ${JSON.stringify(join(src, 'journal/core/rewrite'))};
import { declareVocabulary } from ${JSON.stringify(join(src, 'journal/codec/store-spec'))};
const spec = { file: 'items.jsonl', vocabulary: declareVocabulary(['item.put', 'item.deleted']), initial: () => new Map(),
  evolve: (s: Map<string, unknown>, r: any) => void (r.ev === 'item.put' ? s.set(r.data.id, r.data.value) : s.delete(r.data.id)),
  live: () => [] };
const store = new DataDir(process.argv[2]!, { warn: () => {} }, 5_000);
rewriteRecords(store, [spec], ${JSON.stringify(TS)}, (r) => (r.ev === 'item.put' ? { ...r, data: { ...r.data, value: 'redacted' } } : undefined),
  { note: 'redacted', doing: 'redaction' }).then(() => process.exit(0));
`,
  );
  script = join(dir, 'rewrite.cjs');
  buildSync({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', outfile: script, external: ['postgres'], logLevel: 'error' });
});

async function seeded(): Promise<{ root: string; store: DataDir; before: Buffer }> {
  const root = freshDataDir();
  const store = new DataDir(root, { warn: () => {} }, 5_000);
  for (const drafts of [puts(3), puts(2, 4), [{ ev: 'item.deleted', data: { id: 'k1' } }]]) {
    await store.write(async (tx) => {
      await tx.load(ITEM_STORE);
      tx.append(ITEM_STORE, drafts);
    }, TS);
  }
  return { root, store, before: fs.readFileSync(join(root, ITEM_STORE.file)) };
}

describe('a per-record rewrite killed at each step (data directory)', () => {
  it.each(['rewrite:before-rename', 'rewrite:after-rename'])('SIGKILL at %s leaves the journal whole, old or new, and healthy', async (point) => {
    const { root, store, before } = await seeded();
    const run = spawnSync(process.execPath, [script, root], { env: { ...process.env, CRUX_TEST_CRASH_AT: point }, encoding: 'utf8' });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    const now = fs.readFileSync(join(root, ITEM_STORE.file));
    const values = [...(await store.read(ITEM_STORE)).values()];
    if (point === 'rewrite:before-rename') {
      expect(now.equals(before)).toBe(true);
      expect(values).toEqual([2, 3, 4, 5]);
    } else {
      expect(now.equals(before)).toBe(false);
      expect(values).toEqual(['redacted', 'redacted', 'redacted', 'redacted']);
    }
    const [checked] = await store.check([ITEM_STORE], { repair: false, ts: TS });
    expect(checked).toMatchObject({ problems: [], records: 6, torn_tail: false });
    // The next rewrite takes the temp file a crash before the rename left into quarantine, and finishes the job.
    const again = await rewriteRecords(
      store,
      [ITEM_STORE],
      TS,
      (r) => (r.ev === 'item.put' && r.data.value !== 'redacted' ? { ...r, data: { ...r.data, value: 'redacted' } } : undefined),
      {
        note: 'redacted',
        doing: 'redaction',
      },
    );
    expect(again[0]!.changed).toBe(point === 'rewrite:before-rename' ? 5 : 0);
    expect(fs.readdirSync(root).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    if (point === 'rewrite:before-rename') expect(fs.readdirSync(join(root, 'quarantine')).some((n) => n.endsWith('stray-rewrite'))).toBe(true);
    expect([...(await store.read(ITEM_STORE)).values()]).toEqual(['redacted', 'redacted', 'redacted', 'redacted']);
  });

  it('without a crash the child finishes (the script itself works)', async () => {
    const { root, store } = await seeded();
    execFileSync(process.execPath, [script, root]);
    expect([...(await store.read(ITEM_STORE)).values()]).toEqual(['redacted', 'redacted', 'redacted', 'redacted']);
  });
});
