// The record-rewrite path over a journal's whole lineage (core/rewrite.ts, rewriteRecords), on both engines: every
// history piece and the journal go through the transform, re-chained down the lineage so that `journal check`
// verifies every piece and each link; quarantined items through a bytes transform; records before the first
// change keep their bytes; a dry run writes nothing; cache/ keeps no old text.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import { rewriteRecords, type RecordTransform } from '../../../src/journal/core/rewrite';
import type { LineStore } from '../../../src/journal/core/line-store';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import { ENGINES, tempDir, type StoreKind } from '../../helpers/cli';
import { freshStoreUrl, psql } from '../../helpers/pg';
import { seedLineage, storeBytes, T2 } from '../../helpers/lineage';
import { ITEM_STORE, puts } from './fixtures';

const opened: PgStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

function open(kind: StoreKind): { store: JournalStore; lines: LineStore; where: string } {
  const reporter = { warn: () => {} };
  if (kind === 'dir') {
    const root = join(tempDir(), 'data');
    const store = new DataDir(root, reporter, 5_000);
    return { store, lines: store, where: root };
  }
  const url = freshStoreUrl('lineage');
  const store = new PgStore(parseStoreUrl(url), { reporter, lockTimeoutMs: 5_000, cruxVersion: 'test', specs: [ITEM_STORE] });
  opened.push(store);
  return { store, lines: store.lineStore, where: url };
}

const hideTwo: RecordTransform = (r) => (r.ev === 'item.put' && r.data.value === 2 ? { ...r, data: { ...r.data, value: 'X' } } : undefined);
const hideSecret = (bytes: Buffer) =>
  bytes.includes('SECRET-2') ? Buffer.from(bytes.toString('latin1').replaceAll('SECRET-2', '[gone]'), 'latin1') : undefined;
const opts = { note: 'redacted', doing: 'the rewrite', quarantine: hideSecret };

/** Every record ever kept, oldest first, as seq:value. */
async function everRecorded(store: JournalStore): Promise<string[]> {
  const seen: string[] = [];
  await store.readHistory(ITEM_STORE, (r) => seen.push(`${r.seq}:${r.ev === 'item.put' ? r.data.value : '-'}`));
  return seen;
}

describe.each(ENGINES)('rewriting a lineage (%s)', (kind) => {
  it('rewrites history pieces, the journal and the quarantine at once, re-chained: check verifies every piece and link', async () => {
    const { store, lines, where } = open(kind);
    await seedLineage(store, lines);
    const before = storeBytes(where);
    const beforeRecords = await everRecorded(store);
    expect([...before.values()].join('\n')).toContain('"value":2');
    const result = await rewriteRecords(lines, [ITEM_STORE], T2, hideTwo, opts);
    const [report] = result.journals;
    expect(report).toMatchObject({ file: ITEM_STORE.file, history: { pieces: 2 } });
    expect(report!.changed + report!.history.changed).toBeGreaterThanOrEqual(2); // piece 1 and the journal's restatement
    expect(result.quarantine).toEqual({ items: 1, changed: 1 });
    const after = storeBytes(where);
    const all = [...after.values()].join('\n');
    expect(all).not.toContain('"value":2');
    expect(all).not.toContain('SECRET-2');
    expect(all).toContain('[gone]');
    const [checked] = await store.check([ITEM_STORE], { repair: false, ts: T2 });
    expect(checked).toMatchObject({ problems: [], history: { files: 2, problems: [] } });
    expect(await everRecorded(store)).toEqual(beforeRecords.map((r) => r.replace(/:2$/, ':X')));
    expect([...(await store.read(ITEM_STORE))]).toEqual([
      ['k2', 'X'],
      ['k3', 3],
      ['k5', 5],
      ['k7', 7],
      ['k8', 8],
    ]);
    // The records before the first change keep their bytes (piece 1's first line: k1's put).
    const firstPiece = (m: Map<string, string>) => [...m].find(([k]) => /history/.test(k))![1];
    expect(
      firstPiece(after)
        .split('\n')[0]!
        .replace(/^\d+ \d+ /, ''),
    ).toBe(
      firstPiece(before)
        .split('\n')[0]!
        .replace(/^\d+ \d+ /, ''),
    );
    // A second pass finds nothing to change and writes nothing.
    const again = await rewriteRecords(lines, [ITEM_STORE], T2, hideTwo, opts);
    expect(again.journals[0]).toMatchObject({ changed: 0, history: { changed: 0 } });
    expect(storeBytes(where)).toEqual(after);
  });

  it('a dry run runs every transform and writes nothing', async () => {
    const { store, lines, where } = open(kind);
    await seedLineage(store, lines);
    const before = storeBytes(where);
    const dry = await rewriteRecords(lines, [ITEM_STORE], T2, hideTwo, { ...opts, dryRun: true });
    expect(dry.quarantine).toEqual({ items: 1, changed: 1 });
    expect(dry.journals[0]!.changed + dry.journals[0]!.history.changed).toBeGreaterThanOrEqual(2);
    expect(storeBytes(where)).toEqual(before);
  });

  it('refuses a lineage with a damaged history piece, changing nothing', async () => {
    const { store, lines, where } = open(kind);
    await seedLineage(store, lines);
    if (kind === 'dir') {
      const dir = join(where, 'history');
      const name = fs.readdirSync(dir).sort()[0]!;
      fs.writeFileSync(join(dir, name), fs.readFileSync(join(dir, name), 'utf8').replace('"k3"', '"kZ"'));
    } else {
      const schema = new URL(where).searchParams.get('schema');
      psql(`update ${schema}.history set body = replace(body, '"k3"', '"kZ"') where generation = 1`, where);
    }
    const before = storeBytes(where);
    await expect(rewriteRecords(lines, [ITEM_STORE], T2, hideTwo, opts)).rejects.toMatchObject({ kind: 'journal_damaged' });
    expect(storeBytes(where)).toEqual(before);
  });
});

/** The toy store with a key index and a JSON snapshot (derived files that hold its values). */
const KEYED: StoreSpec<Map<string, unknown>> = {
  ...ITEM_STORE,
  keyOf: (record) => record.data?.id,
  snapshot: {
    version: 1,
    encode: (state) => Buffer.from(JSON.stringify([...state])),
    decode: (body) => new Map(JSON.parse(body.read(0, body.length).toString('utf8'))),
  },
};

describe('rewriting a lineage (dir): derived files', () => {
  it('leaves no cache/ file with the old text, and reads answer from the new journal', async () => {
    const { store, lines, where } = open('dir');
    await seedLineage(store, lines, KEYED);
    await store.read(KEYED); // a reader keeps its derived files
    const cached = () => fs.readdirSync(join(where, 'cache')).map((n) => fs.readFileSync(join(where, 'cache', n), 'latin1'));
    expect(cached().join('\n')).toContain('["k2",2]');
    await rewriteRecords(lines, [KEYED], T2, hideTwo, opts);
    expect(cached().join('\n')).not.toContain('["k2",2]');
    expect(cached().join('\n')).toContain('["k2","X"]'); // rebuilt from the new journal
    expect((await store.read(KEYED)).get('k2')).toBe('X');
    expect((await store.readKey(KEYED, 'k2')).get('k2')).toBe('X');
  });
});

describe.runIf(ENGINES.includes('pg'))('rewriting a lineage (pg): derived rows', () => {
  it('leaves no snapshot row with the old text, and reads answer from the new rows', async () => {
    const url = freshStoreUrl('lineage');
    const store = new PgStore(parseStoreUrl(url), { reporter: { warn: () => {} }, lockTimeoutMs: 5_000, cruxVersion: 'test', specs: [KEYED] });
    opened.push(store);
    await store.write(async (tx) => {
      await tx.load(KEYED);
      tx.append(KEYED, puts(2100));
    }, T2);
    await store.read(KEYED); // past SNAPSHOT_AFTER_ROWS: a reader keeps a snapshot row
    const schema = new URL(url).searchParams.get('schema');
    const snapshot = () => psql(`select encode(bytes, 'escape') from ${schema}.snapshots`, url);
    expect(snapshot()).toContain('["k2",2]');
    await rewriteRecords(store.lineStore, [KEYED], T2, hideTwo, opts);
    expect(snapshot()).not.toContain('["k2",2]');
    expect((await store.read(KEYED)).get('k2')).toBe('X');
  });
});
