// The whole-journal operations written once (core/: check and repair, history, the record-rewrite path) over both
// line stores, part three of the conformance suite: what repair keeps of a removed line, a damaged history piece
// found and quarantined, a per-record transform re-chained in place, refusals over damage.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import { rewriteRecords } from '../../../src/journal/core/rewrite';
import type { LineStore } from '../../../src/journal/core/line-store';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import type { EventDraft } from '../../../src/journal/codec/record';
import { ENGINES, journalLines, tempDir, type StoreKind } from '../../helpers/cli';
import { freshStoreUrl, psql } from '../../helpers/pg';
import { ITEM_STORE, puts } from './fixtures';

const TS = '2026-11-29T21:00:00.000Z';
const LATER = '2026-11-30T08:00:00.000Z';
const opened: PgStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

interface Opened {
  store: JournalStore;
  /** The store as core/ sees it. */
  lines: LineStore;
  /** How journalLines (test/helpers) names the store. */
  where: string;
  /** Replaces line `line` of piece `n` (1: the oldest) of a journal's history behind the store's back. */
  tamperHistory(n: number, line: number, edit: (body: string) => string): void;
  /** Replaces line `line` of a journal behind the store's back. */
  tamper(line: number, edit: (body: string) => string): void;
  /** The quarantine's items, by the end of their name. */
  quarantined(suffix: string): Buffer[];
}

function open(kind: StoreKind): Opened {
  const reporter = { warn: () => {} };
  const edit = (path: string, line: number, change: (body: string) => string) => {
    const lines = fs.readFileSync(path, 'utf8').split('\n');
    lines[line - 1] = change(lines[line - 1]!);
    fs.writeFileSync(path, lines.join('\n'));
  };
  if (kind === 'dir') {
    const root = join(tempDir(), 'data');
    const store = new DataDir(root, reporter, 5_000);
    return {
      store,
      lines: store,
      where: root,
      tamper: (line, change) => edit(join(root, ITEM_STORE.file), line, change),
      tamperHistory(n, line, change) {
        const names = fs.readdirSync(join(root, 'history')).sort();
        edit(join(root, 'history', names[n - 1]!), line, change);
      },
      quarantined: (suffix) =>
        fs
          .readdirSync(join(root, 'quarantine'))
          .filter((name) => name.endsWith(suffix))
          .map((name) => fs.readFileSync(join(root, 'quarantine', name))),
    };
  }
  const url = freshStoreUrl('core');
  const store = new PgStore(parseStoreUrl(url), { reporter, lockTimeoutMs: 5_000, cruxVersion: 'test', specs: [ITEM_STORE] });
  opened.push(store);
  const schema = new URL(url).searchParams.get('schema');
  const update = (table: string, where: string, change: (body: string) => string) => {
    const body = psql(`select body from ${table} where ${where}`).replace(/\n$/, '');
    psql(`update ${table} set body = '${change(body).replace(/'/g, "''")}' where ${where}`);
  };
  return {
    store,
    lines: store.lineStore,
    where: url,
    tamper: (line, change) => update(`${schema}.journal_items`, `line = ${line}`, change),
    tamperHistory: (n, line, change) => update(`${schema}.history`, `journal = 'items.jsonl' and generation = ${n} and line = ${line}`, change),
    quarantined: (suffix) =>
      psql(`select encode(bytes, 'hex') from ${schema}.quarantine where name like '%${suffix}' order by at, name`)
        .split('\n')
        .filter(Boolean)
        .map((hex) => Buffer.from(hex, 'hex')),
  };
}

const write = (store: JournalStore, drafts: EventDraft[], ts = TS) =>
  store.write(async (tx) => {
    await tx.load(ITEM_STORE);
    tx.append(ITEM_STORE, drafts);
  }, ts);
const failure = async (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => error,
  );

describe.each(ENGINES)('the whole-journal operations on a %s store (core/ over its line store)', (kind) => {
  it('repair keeps the journal as it was and each removed line at its offset in the journal as a file', async () => {
    const { store, where, tamper, quarantined } = open(kind);
    await write(store, puts(2));
    await write(store, puts(1, 3));
    await write(store, puts(1, 4));
    tamper(3, (body) => body.replace('"k3"', '"kX"'));
    const before = journalLines(where, ITEM_STORE.file);
    const [repaired] = await store.check([ITEM_STORE], { repair: true, ts: TS });
    expect(repaired).toMatchObject({ problems: [{ line: 3, reason: 'hash mismatch' }], repaired: { removed: 1 } });
    expect(repaired!.repaired!.quarantine).toHaveLength(2);
    expect(quarantined('before-repair').map(String)).toEqual([before.map((l) => `${l}\n`).join('')]);
    const removed = quarantined('removed-lines.jsonl').map((b) => JSON.parse(String(b)));
    expect(removed).toEqual([
      {
        line: 3,
        offset: Buffer.byteLength(`${before[0]}\n${before[1]}\n`),
        reason: 'hash mismatch',
        bytes_b64: Buffer.from(before[2]!).toString('base64'),
      },
    ]);
    const [again] = await store.check([ITEM_STORE], { repair: false, ts: TS });
    expect(again).toMatchObject({ problems: [], records: 3 });
  });

  it('check names a damaged history piece where it is; repair quarantines it whole, and what is left verifies', async () => {
    const { store, tamperHistory } = open(kind);
    await write(store, puts(3));
    await write(store, [{ ev: 'item.deleted', data: { id: 'k1' } }]);
    await store.compact([ITEM_STORE], TS);
    await write(store, [{ ev: 'item.deleted', data: { id: 'k2' } }]);
    await store.compact([ITEM_STORE], TS);
    tamperHistory(1, 2, (body) => body.replace('"k2"', '"kY"'));
    const [checked] = await store.check([ITEM_STORE], { repair: false, ts: TS });
    expect(checked!.problems).toEqual([]);
    expect(checked!.history).toMatchObject({ files: 2, problems: [expect.objectContaining({ line: 2, reason: 'hash mismatch' })] });
    expect(checked!.history!.problems[0]!.file).toMatch(kind === 'dir' ? /^history\/items\.\d{12}\.jsonl$/ : /^history\/items\.jsonl#1$/);
    const [repaired] = await store.check([ITEM_STORE], { repair: true, ts: TS });
    expect(repaired!.history!.quarantined).toHaveLength(1);
    const [after] = await store.check([ITEM_STORE], { repair: false, ts: TS });
    expect(after!.history).toMatchObject({ files: 1, problems: [] });
    const seen: string[] = [];
    await store.readHistory(ITEM_STORE, (record) => seen.push(`${record.seq}`));
    expect(seen.length).toBeGreaterThan(0);
  });

  it('rewrites every record through a transform, re-chained in place: check is healthy, reads and history see the change', async () => {
    const { store, lines, where } = open(kind);
    await write(store, puts(3));
    await write(store, [{ ev: 'item.deleted', data: { id: 'k1' } }]);
    await store.compact([ITEM_STORE], TS);
    await write(store, puts(1, 9), LATER);
    const before = journalLines(where, ITEM_STORE.file);
    const untouched = await rewriteRecords(lines, [ITEM_STORE], LATER, () => undefined, { note: 'rewritten', doing: 'the rewrite' });
    expect(untouched.journals).toEqual([{ file: ITEM_STORE.file, records: 4, changed: 0, history: { pieces: 1, records: 4, changed: 0 } }]);
    expect(journalLines(where, ITEM_STORE.file)).toEqual(before);
    const reports = await rewriteRecords(
      lines,
      [ITEM_STORE],
      LATER,
      (record) => (record.ev === 'item.put' && record.data.id === 'k3' ? { ...record, data: { id: 'k3', value: 'redacted' } } : undefined),
      { note: 'redacted', doing: 'the rewrite' },
    );
    expect(reports.journals).toEqual([{ file: ITEM_STORE.file, records: 4, changed: 1, history: { pieces: 1, records: 4, changed: 1 } }]);
    const after = journalLines(where, ITEM_STORE.file);
    expect(after).toHaveLength(4);
    expect(after.join('\n')).not.toContain('"value":3');
    expect(after[3]).not.toEqual(before[3]); // re-chained: the records after the change carry new hashes
    expect(JSON.parse(after[3]!).ts).toBe(LATER); // each keeps its own time
    expect([...(await store.read(ITEM_STORE))]).toEqual([
      ['k2', 2],
      ['k3', 'redacted'],
      ['k9', 9],
    ]);
    expect((await store.readKey(ITEM_STORE, 'k3')).get('k3')).toBe('redacted');
    const [checked] = await store.check([ITEM_STORE], { repair: false, ts: LATER });
    expect(checked).toMatchObject({ problems: [], records: 4, history: { files: 1, problems: [] } });
    const seen: string[] = [];
    await store.readHistory(ITEM_STORE, (record) => seen.push(`${record.seq}:${JSON.stringify(record.data)}`));
    expect(seen.at(-1)).toBe('8:{"id":"k9","value":9}');
  });

  it('refuses to rewrite a damaged journal, changing nothing', async () => {
    const { store, lines, where, tamper } = open(kind);
    await write(store, puts(3));
    tamper(2, (body) => body.replace('"k2"', '"kZ"'));
    const before = journalLines(where, ITEM_STORE.file);
    const refused = await failure(rewriteRecords(lines, [ITEM_STORE], TS, (r) => r, { note: 'redacted', doing: 'redaction' }));
    expect(refused).toMatchObject({ kind: 'journal_damaged', message: expect.stringMatching(/redaction would drop them/) });
    expect(journalLines(where, ITEM_STORE.file)).toEqual(before);
  });
});
