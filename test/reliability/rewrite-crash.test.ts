// The record-rewrite path over a whole lineage (core/rewrite.ts, what `journal redact`, `encrypt` and `rekey` take)
// is all or nothing under kill -9: a child rewrites a store whose journal has two history pieces and a quarantined
// item, and is killed at each crash point. Before the commit point the store is the old one byte for byte; after it,
// the next holder of the lock (here `journal check`) finishes the rewrite and the store is the new one whole. Either
// way check is healthy, and nothing staged is left behind. On PostgreSQL the rewrite is one transaction.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDir } from '../../src/journal/dir/data-dir';
import { PgStore } from '../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../src/journal/pg/url';
import type { JournalStore } from '../../src/journal/core/store-boundary';
import type { LineStore } from '../../src/journal/core/line-store';
import { ENGINES, freshDataDir, tempDir, type StoreKind } from '../helpers/cli';
import { freshStoreUrl } from '../helpers/pg';
import { seedLineage, storeBytes, T1 } from '../helpers/lineage';
import { ITEM_STORE } from '../unit/journal/fixtures';

const src = resolve(__dirname, '../../src');
let script = '';
const opened: PgStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

/** A child that rewrites journal `items.jsonl` of the store argv[2]: every value 2 becomes "X", "SECRET-2" in quarantine "[gone]". */
beforeAll(() => {
  const dir = tempDir();
  const entry = join(dir, 'rewrite.ts');
  fs.writeFileSync(
    entry,
    `import { DataDir } from ${JSON.stringify(join(src, 'journal/dir/data-dir'))};
import { PgStore } from ${JSON.stringify(join(src, 'journal/pg/pg-store'))};
import { parseStoreUrl } from ${JSON.stringify(join(src, 'journal/pg/url'))};
import { rewriteRecords } from ${JSON.stringify(join(src, 'journal/core/rewrite'))};
import { declareVocabulary } from ${JSON.stringify(join(src, 'journal/codec/store-spec'))};
const spec = { file: 'items.jsonl', vocabulary: declareVocabulary(['item.put', 'item.deleted']), initial: () => new Map(),
  evolve: (s: Map<string, unknown>, r: any) => void (r.ev === 'item.put' ? s.set(r.data.id, r.data.value) : s.delete(r.data.id)),
  live: (s: Map<string, unknown>) => [...s].map(([id, value]) => ({ ev: 'item.put', data: { id, value } })) };
const where = process.argv[2]!;
const reporter = { warn: () => {} };
const pg = where.startsWith('postgres') ? new PgStore(parseStoreUrl(where), { reporter, lockTimeoutMs: 5_000, cruxVersion: 'test', specs: [spec] }) : undefined;
const lines = pg?.lineStore ?? new DataDir(where, reporter, 5_000);
rewriteRecords(lines, [spec], ${JSON.stringify(T1)}, (r) => (r.ev === 'item.put' && r.data.value === 2 ? { ...r, data: { ...r.data, value: 'X' } } : undefined), {
  note: 'redacted', doing: 'redaction',
  quarantine: (b) => (b.includes('SECRET-2') ? Buffer.from(b.toString('latin1').replaceAll('SECRET-2', '[gone]'), 'latin1') : undefined),
}).then(() => process.exit(0));
`,
  );
  script = join(dir, 'rewrite.cjs');
  buildSync({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', outfile: script, logLevel: 'error' });
});

function open(kind: StoreKind): { store: JournalStore; lines: LineStore; where: string } {
  const reporter = { warn: () => {} };
  if (kind === 'dir') {
    const root = freshDataDir();
    const store = new DataDir(root, reporter, 5_000);
    return { store, lines: store, where: root };
  }
  const url = freshStoreUrl('rwcrash');
  const store = new PgStore(parseStoreUrl(url), { reporter, lockTimeoutMs: 5_000, cruxVersion: 'test', specs: [ITEM_STORE] });
  opened.push(store);
  return { store, lines: store.lineStore, where: url };
}

const isNew = (bytes: Map<string, string>) => {
  const all = [...bytes.values()].join('\n');
  return !all.includes('"value":2') && !all.includes('SECRET-2') && all.includes('"value":"X"') && all.includes('[gone]');
};

/** Where each engine can be killed, and whether the store is then the new one (after the next holder of the lock). */
const POINTS: Record<StoreKind, [string, 'old' | 'new'][]> = {
  dir: [
    ['rewrite-set:staged', 'old'],
    ['rewrite-set:committed', 'new'],
    ['rewrite-set:moved#1', 'new'],
    ['rewrite-set:moved#3', 'new'],
    ['rewrite-set:applied', 'new'],
  ],
  pg: [['pg-rewrite:staged', 'old']],
};

describe.each(ENGINES)('a lineage rewrite killed at each step (%s)', (kind) => {
  it.each(POINTS[kind])('SIGKILL at %s leaves the %s store, whole', async (point, expected) => {
    const { store, lines, where } = open(kind);
    await seedLineage(store, lines);
    const before = storeBytes(where);
    const run = spawnSync(process.execPath, [script, where], { env: { ...process.env, CRUX_TEST_CRASH_AT: point }, encoding: 'utf8' });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    if (expected === 'old') {
      // Nothing a reader takes changed: the staged files have names no reader takes.
      const seen = storeBytes(where);
      for (const [name, bytes] of before) expect(seen.get(name), name).toBe(bytes);
    }
    const [checked] = await store.check([ITEM_STORE], { repair: false, ts: T1 });
    expect(checked).toMatchObject({ problems: [], torn_tail: false, history: { files: 2, problems: [] } });
    const after = storeBytes(where);
    if (expected === 'old') expect(after).toEqual(before);
    else expect(isNew(after)).toBe(true);
    if (kind === 'dir') expect(fs.readdirSync(where, { recursive: true }).filter((n) => /staged|rewrite-plan|rewrite-staging/.test(String(n)))).toEqual([]);
    expect((await store.read(ITEM_STORE)).get('k2')).toBe(expected === 'old' ? 2 : 'X');
  });

  it('without a crash the child finishes (the script itself works)', async () => {
    const { store, lines, where } = open(kind);
    await seedLineage(store, lines);
    execFileSync(process.execPath, [script, where]);
    expect(isNew(storeBytes(where))).toBe(true);
    expect((await store.read(ITEM_STORE)).get('k2')).toBe('X');
  });
});
