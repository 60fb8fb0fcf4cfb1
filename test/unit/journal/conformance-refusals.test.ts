// The JournalStore contract (store-boundary.ts), part two of the suite over both kinds of store (conformance.test.ts
// is part one): the reads (whole, with, by key, by secondary key, newest, at positions), the transaction's
// refusals, a damaged record (reported and skipped, refused by compaction, quarantined by repair), the lock's
// bound, compaction without history, doctor's survey and the key store's every method.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import type { LinePosition } from '../../../src/journal/codec/line';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import { CruxError } from '../../../src/shared/errors';
import { ENGINES, tempDir, type StoreKind } from '../../helpers/cli';
import { freshStoreUrl, psql } from '../../helpers/pg';
import { ITEM_STORE, puts } from './fixtures';

const TS = '2026-11-29T21:00:00.000Z';
type Items = Map<string, unknown>;
/** ITEM_STORE by key, with each item's parity and value as secondary keys, and each record's position kept. */
const positions = new Map<string, LinePosition>();
const INDEXED: StoreSpec<Items> = {
  ...ITEM_STORE,
  file: 'indexed.jsonl',
  evolve(state, record, at) {
    ITEM_STORE.evolve(state, record, at);
    if (record.ev === 'item.put') positions.set(`${record.data.id}=${record.data.value}`, at);
  },
  keyOf: (record) => record.data?.id,
  secondary: {
    names: ['parity', 'value'],
    version: 1,
    values: (state, key) => {
      const v = state.get(key);
      return typeof v === 'number' ? [v % 2 === 0 ? 'even' : 'odd', v] : [undefined, undefined];
    },
  },
};
const opened: PgStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

interface Opened {
  store: JournalStore;
  warnings: string[];
  /** Replaces line `line` of a journal by `body` behind the store's back (an edit on disk, an UPDATE). */
  tamper(file: string, line: number, edit: (body: string) => string): void;
  /** Another handle on the same store (another process's view): its own connection, its own lock wait. */
  again(lockTimeoutMs: number): JournalStore;
}

function open(kind: StoreKind, lockTimeoutMs = 5_000): Opened {
  const warnings: string[] = [];
  const reporter = { warn: (m: string) => warnings.push(m) };
  if (kind === 'dir') {
    const root = join(tempDir(), 'data');
    return {
      store: new DataDir(root, reporter, lockTimeoutMs),
      warnings,
      tamper(file, line, edit) {
        const lines = fs.readFileSync(join(root, file), 'utf8').split('\n');
        lines[line - 1] = edit(lines[line - 1]!);
        fs.writeFileSync(join(root, file), lines.join('\n'));
      },
      again: (timeout) => new DataDir(root, reporter, timeout),
    };
  }
  const url = freshStoreUrl('conf2');
  const make = (timeout: number) => {
    const store = new PgStore(parseStoreUrl(url), { reporter, lockTimeoutMs: timeout, cruxVersion: 'test', specs: [ITEM_STORE, INDEXED] });
    opened.push(store);
    return store;
  };
  const schema = new URL(url).searchParams.get('schema');
  return {
    store: make(lockTimeoutMs),
    warnings,
    tamper(file, line, edit) {
      const table = `${schema}.journal_${file.replace(/\.jsonl$/, '')}`;
      const body = psql(`select body from ${table} where line = ${line}`).replace(/\n$/, '');
      psql(`update ${table} set body = '${edit(body).replace(/'/g, "''")}' where line = ${line}`);
    },
    again: make,
  };
}
const write = (store: JournalStore, spec: StoreSpec<Items>, drafts: ReturnType<typeof puts>) =>
  store.write(async (tx) => {
    await tx.load(spec);
    tx.append(spec, drafts);
  }, TS);
const failure = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal');
};

describe.each(ENGINES)('the JournalStore contract on a %s store (reads, refusals, damage)', (kind) => {
  it('answers every read the same: whole, with, by key, by secondary key (equals, at most), newest, at positions', async () => {
    const { store } = open(kind);
    await write(store, INDEXED, puts(20));
    const whole = await store.read(INDEXED);
    expect(whole.size).toBe(20);
    expect(await store.readWith(INDEXED, (state) => [...state.keys()])).toEqual([...whole.keys()]);
    expect((await store.readKey(INDEXED, 'k7')).get('k7')).toBe(7);
    const even = await store.readIndexed(INDEXED, { index: 'parity', equals: 'even' });
    for (let i = 2; i <= 20; i += 2) expect(even.get(`k${i}`)).toBe(i);
    const small = await store.readIndexed(INDEXED, { index: 'value', atMost: 5 });
    for (let i = 1; i <= 5; i++) expect(small.get(`k${i}`)).toBe(i);
    if (store.readNewest !== undefined) {
      const newest = await store.readNewest(INDEXED, { index: 'value', atMost: 15 }, (state) => state.size >= 3);
      for (const i of [15, 14, 13]) expect(newest.state.get(`k${i}`)).toBe(i);
      expect(newest.total === undefined || newest.total === 15).toBe(true);
    }
    const at = [positions.get('k3=3')!, positions.get('k11=11')!];
    expect((await store.readAt(INDEXED, at)).map((r) => r?.data)).toEqual([
      { id: 'k3', value: 3 },
      { id: 'k11', value: 11 },
    ]);
  });

  it('refuses a load by key after an append, and a whole load after a load by key, writing nothing', async () => {
    const { store } = open(kind);
    await write(store, INDEXED, puts(3));
    expect(
      String(
        await failure(
          store.write(async (tx) => {
            await tx.loadKey(INDEXED, 'k1');
            tx.append(INDEXED, puts(1, 4));
            await tx.loadKey(INDEXED, 'k2');
          }, TS),
        ),
      ),
    ).toMatch(/load every key before the first append/);
    const partial = await store.write(async (tx) => {
      const some = await tx.loadKey(INDEXED, 'k1');
      if (some.size === 3) return 'whole'; // an implementation may answer a key load with the whole state
      return String(await failure(tx.load(INDEXED)));
    }, TS);
    expect(partial).toMatch(/^(whole|Error: .*a whole load after a load by key)/);
    expect([...(await store.read(INDEXED)).keys()]).toEqual(['k1', 'k2', 'k3']);
  });

  it('a position of a record a compaction rewrote reads as none (a stale position is never another record)', async () => {
    const { store } = open(kind);
    await write(store, INDEXED, puts(2));
    await write(store, INDEXED, [{ ev: 'item.put', data: { id: 'k1', value: 10 } }]);
    const old = positions.get('k1=1')!;
    expect((await store.readAt(INDEXED, [old]))[0]?.data).toEqual({ id: 'k1', value: 1 });
    await store.compact([INDEXED], TS);
    const [after] = await store.readAt(INDEXED, [old]);
    expect(after === undefined || (after.data as { value: number }).value !== 1 || after.ev === 'journal.snapshot').toBe(true);
    expect(after?.data).not.toEqual({ id: 'k1', value: 1 });
  });

  it('a damaged record is reported and skipped by reads, named by check (9), refused by compaction, quarantined by repair', async () => {
    const { store, warnings, tamper } = open(kind);
    await write(store, ITEM_STORE, puts(2));
    await write(store, ITEM_STORE, puts(1, 3));
    await write(store, ITEM_STORE, puts(1, 4));
    tamper(ITEM_STORE.file, 3, (body) => body.replace('"k3"', '"kX"'));
    warnings.length = 0;
    const state = await store.read(ITEM_STORE);
    expect(state.has('kX')).toBe(false);
    expect(state.get('k4')).toBe(4);
    expect(warnings.join('\n')).toMatch(/3/);
    const [checked] = await store.check([ITEM_STORE], { repair: false, ts: TS });
    expect(checked!.problems).toEqual([expect.objectContaining({ line: 3, reason: 'hash mismatch' })]);
    expect(await failure(store.compact([ITEM_STORE], TS))).toMatchObject({ kind: 'journal_damaged' });
    const [repaired] = await store.check([ITEM_STORE], { repair: true, ts: TS });
    expect(repaired!.repaired).toMatchObject({ removed: 1 });
    expect(repaired!.repaired!.quarantine.length).toBeGreaterThanOrEqual(1);
    const [again] = await store.check([ITEM_STORE], { repair: false, ts: TS });
    expect(again).toMatchObject({ problems: [], records: 3, quarantined: expect.any(Number) });
    expect(again!.quarantined).toBeGreaterThan(0);
    await write(store, ITEM_STORE, puts(1, 5));
    expect([...(await store.read(ITEM_STORE)).keys()]).toEqual(['k1', 'k2', 'k4', 'k5']);
  });

  it('a writer waits for the lock at most its bound, then refuses (75) with nothing written', async () => {
    const { store, again } = open(kind);
    await write(store, ITEM_STORE, puts(1));
    let release!: () => void;
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const holder = store.write(async (tx) => {
      await tx.load(ITEM_STORE);
      tx.append(ITEM_STORE, puts(1, 2));
      held();
      await new Promise<void>((resolve) => (release = resolve));
    }, TS);
    await holding;
    const waiter = again(300);
    const refused = await failure(write(waiter, ITEM_STORE, puts(1, 3)));
    release();
    await holder;
    expect(refused).toBeInstanceOf(CruxError);
    expect((refused as CruxError).exitCode).toBe(75);
    expect([...(await store.read(ITEM_STORE)).keys()]).toEqual(['k1', 'k2']);
  });

  it('compacts without history on request, surveys its journals for doctor, and keeps every key method', async () => {
    const { store } = open(kind);
    await write(store, ITEM_STORE, puts(3));
    await write(store, ITEM_STORE, [{ ev: 'item.deleted', data: { id: 'k1' } }]);
    await store.compact([ITEM_STORE], TS, undefined, { dropHistory: true });
    let history = 0;
    await store.readHistory(ITEM_STORE, () => (history += 1));
    expect(history).toBe(2); // the live records the snapshot restates (k2, k3): what the compaction dropped is gone
    const [checked] = await store.check([ITEM_STORE], { repair: false, ts: TS });
    expect(checked!.history === undefined || checked!.history.files === 0).toBe(true);
    const facts = await store.survey([ITEM_STORE]);
    expect(facts.location).toMatchObject({ exists: true, usable: true });
    expect(facts.journals[0]).toMatchObject({ file: ITEM_STORE.file, records: 3, problems: [], compaction_due: false });
    expect(facts.lock.held).toBe(false);
    expect(store.keys.describe('agent-a.ed25519.pem')).toContain('agent-a.ed25519.pem');
    expect(await store.keys.stat('agent-a.ed25519.pem')).toBeUndefined();
    expect(await store.keys.peek('agent-a.ed25519.pem')).toBeUndefined();
    expect(await store.keys.create('agent-a.ed25519.pem', 'pem text')).toBe(true);
    expect(Buffer.from((await store.keys.peek('agent-a.ed25519.pem'))!).toString()).toBe('pem text');
    expect(Buffer.from((await store.keys.read('agent-a.ed25519.pem'))!).toString()).toBe('pem text');
    expect(await store.keys.list()).toEqual(['agent-a.ed25519.pem']);
  });
});
