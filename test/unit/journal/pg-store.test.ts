// The PostgreSQL store against a real server: rows byte for byte, the chain, locks, failures, check, compact, restore.
import { describe, expect, it } from 'vitest';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import { encodeRecords, EMPTY_HEAD, type EventDraft, type JournalRecord } from '../../../src/journal/codec/record';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import { CruxError } from '../../../src/shared/errors';
import { COUNTERS, type Counters } from './counters';
import { freshStoreUrl, pgPassword, pgServerUrl, pgSkipReason, psql } from '../../helpers/pg';
import { STRESS } from '../../helpers/cli';

/** A small keyed store: `put` sets an entity's value (and resets it), `add` adds to it. */

const TS = '2026-12-01T09:00:00.000Z';
const warnings: string[] = [];
const open = (url = freshStoreUrl(), lockTimeoutMs = 5000) =>
  new PgStore(parseStoreUrl(url), { reporter: { warn: (m) => warnings.push(m) }, lockTimeoutMs, cruxVersion: 'test', specs: [COUNTERS] });

/** One write that appends `drafts` to COUNTERS (after loading it, as a command does). */
const append = (store: PgStore, drafts: EventDraft[]) =>
  store.write(async (tx) => {
    await tx.load(COUNTERS);
    tx.append(COUNTERS, drafts);
  }, TS);

async function lines(store: PgStore): Promise<string[]> {
  const out: string[] = [];
  for await (const line of store.rawLines(COUNTERS.file)) out.push(Buffer.from(line).toString('utf8'));
  return out;
}

async function failure(p: Promise<unknown>): Promise<CruxError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CruxError);
  return error as CruxError;
}

describe.skipIf(pgSkipReason() !== undefined)('PgStore', () => {
  it('keeps records byte for byte, chained as in a file, and reads whole or by key', async () => {
    const store = open();
    try {
      expect(await store.read(COUNTERS)).toEqual(new Map());
      const drafts = [
        { ev: 'counter.put', data: { id: 'a', n: 1 } },
        { ev: 'counter.put', data: { id: 'b', n: 1e21, s: '"\\\u00e9\u2028' } },
      ];
      await append(store, drafts);
      await store.write(async (tx) => {
        const s = await tx.loadKey(COUNTERS, 'a');
        expect(s.get('a')).toBe(1);
        tx.append(COUNTERS, [{ ev: 'counter.added', data: { id: 'a', n: 2 } }]);
      }, TS);
      const expected = encodeRecords(EMPTY_HEAD, drafts, TS, { batch: true }).text;
      const got = await lines(store);
      expect(`${got.slice(0, 2).join('\n')}\n`).toBe(expected);
      expect(JSON.parse(got[2]!).seq).toBe(3);
      expect(JSON.parse(got[2]!).p).toBe(JSON.parse(got[1]!).h);
      expect(await store.read(COUNTERS)).toEqual(
        new Map([
          ['a', 3],
          ['b', 1e21],
        ]),
      );
      const byKey = await store.readKey(COUNTERS, 'a');
      expect(byKey).toEqual(new Map([['a', 3]]));
      const [report] = await store.check([COUNTERS], { repair: false, ts: TS });
      expect(report).toMatchObject({ name: 'counters', records: 3, problems: [] });
      const at = await store.readAt(COUNTERS, [{ line: 3, offset: 3, length: Buffer.byteLength(got[2]!) }]);
      expect((at[0] as JournalRecord).data).toEqual({ id: 'a', n: 2 });
    } finally {
      await store.close();
    }
  });

  it('leaves nothing behind when decide refuses, not even the schema', async () => {
    const url = freshStoreUrl();
    const store = open(url);
    try {
      await expect(
        store.write(async (tx) => {
          await tx.load(COUNTERS);
          throw new CruxError('conflict', 'no');
        }, TS),
      ).rejects.toThrow('no');
      await store.write(async (tx) => void (await tx.load(COUNTERS)), TS);
      const schema = new URL(url).searchParams.get('schema');
      expect(psql(`select count(*) from pg_namespace where nspname = '${schema}'`).trim()).toBe('0');
    } finally {
      await store.close();
    }
  });

  it('serializes 16 concurrent writers: every record kept, one unbroken chain', async () => {
    const url = freshStoreUrl();
    const stores = Array.from({ length: 16 }, () => open(url, 30_000));
    try {
      await Promise.all(
        stores.map(async (store, w) => {
          for (let i = 0; i < 8; i++) {
            await store.write(async (tx) => {
              const s = await tx.loadKey(COUNTERS, 'total');
              tx.append(COUNTERS, [{ ev: 'counter.added', data: { id: 'total', n: 1, w, i } }]);
              return s;
            }, TS);
          }
        }),
      );
      expect((await stores[0]!.read(COUNTERS)).get('total')).toBe(128);
      const [report] = await stores[0]!.check([COUNTERS], { repair: false, ts: TS });
      expect(report).toMatchObject({ records: 128, problems: [] });
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('runs concurrent operations of one store (one connection, as `crux mcp` shares it) one at a time', async () => {
    const store = open(freshStoreUrl(), 30_000);
    try {
      // Writes, a refused write and reads at once, on a store whose schema does not exist yet: none runs inside
      // another's transaction, so the refusal rolls back only its own.
      const refused = store.write(async () => {
        throw new CruxError('conflict', 'refused on purpose');
      }, TS);
      const writes = Array.from({ length: 12 }, (_, i) =>
        store.write(async (tx) => {
          await tx.loadKey(COUNTERS, `k${i}`);
          tx.append(COUNTERS, [{ ev: 'counter.put', data: { id: `k${i}`, n: i } }]);
        }, TS),
      );
      const reads = Array.from({ length: 6 }, () => store.read(COUNTERS));
      expect((await failure(refused)).kind).toBe('conflict');
      await Promise.all([...writes, ...reads]);
      const state = await store.read(COUNTERS);
      expect([...state].sort()).toEqual(Array.from({ length: 12 }, (_, i) => [`k${i}`, i] as [string, number]).sort());
      const [report] = await store.check([COUNTERS], { repair: false, ts: TS });
      expect(report).toMatchObject({ records: 12, problems: [] });
    } finally {
      await store.close();
    }
  });

  it("a call made from inside a caller's running operation joins it; another caller's waits its turn", async () => {
    const url = freshStoreUrl();
    const store = open(url, 30_000);
    const told: string[] = [];
    const other = store.forCaller({ warn: (m) => told.push(m) });
    try {
      await append(store, [{ ev: 'counter.put', data: { id: 'a', n: 1 } }]);
      const order: string[] = [];
      let theirs: Promise<Counters> | undefined;
      await store.write(async (tx) => {
        await tx.load(COUNTERS);
        // A key created and read while the write decides (handoff keygen does): in this transaction, not after it.
        expect(await store.keys.create('handoff.key', Buffer.alloc(32, 7))).toBe(true);
        expect(Buffer.from((await store.keys.read('handoff.key'))!)).toEqual(Buffer.alloc(32, 7));
        // Another caller (an MCP call) reads meanwhile: it waits until this write has committed.
        theirs = other.read(COUNTERS).then((state) => (order.push('read'), state));
        await new Promise((resolve) => setTimeout(resolve, 100));
        order.push('decided');
        tx.append(COUNTERS, [{ ev: 'counter.put', data: { id: 'x', n: 1 } }]);
      }, TS);
      expect((await theirs!).get('x')).toBe(1);
      expect(order).toEqual(['decided', 'read']);
      expect(await other.keys.list()).toEqual(['handoff.key']);
      // Each caller is told what it meets, on its own reporter: a row edited by hand, read by the other caller only.
      const schema = new URL(url).searchParams.get('schema');
      psql(`update ${schema}.journal_counters set body = replace(body, '"n":1}', '"n":2}') where line = 2`, url);
      warnings.length = 0;
      expect((await other.read(COUNTERS)).has('x')).toBe(false);
      expect(told.join('\n')).toMatch(/journal_counters:2: /);
      expect(warnings).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("a key created while a new store's first write decides (handoff keygen) is committed with it", async () => {
    const store = open();
    try {
      await store.write(async (tx) => {
        await tx.load(COUNTERS);
        expect(await store.keys.create('handoff.key', Buffer.alloc(32, 3))).toBe(true);
        tx.append(COUNTERS, [{ ev: 'counter.put', data: { id: 'a', n: 1 } }]);
      }, TS);
      expect(await store.keys.list()).toEqual(['handoff.key']);
      expect((await store.read(COUNTERS)).get('a')).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('waits for the writers lock at most the lock timeout, then exit 75', async () => {
    const url = freshStoreUrl();
    const holder = open(url);
    const waiter = open(url, 300);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    try {
      const holding = holder.write(async (tx) => {
        await tx.load(COUNTERS);
        entered();
        await held;
      }, TS);
      await inside;
      const started = Date.now();
      const error = await failure(waiter.write(async (tx) => void (await tx.load(COUNTERS)), TS));
      expect(error.kind).toBe('lock_timeout');
      expect(error.exitCode).toBe(75);
      if (STRESS) expect(Date.now() - started).toBeLessThan(3000);
      release();
      await holding;
    } finally {
      await holder.close();
      await waiter.close();
    }
  });

  it('an unreachable server is exit 75 and a refused password 5, naming the server, never the password', async () => {
    const server = new URL(pgServerUrl());
    const refused = new URL(server.href);
    refused.port = '1';
    const wrong = new URL(server.href);
    wrong.password = 'not-the-password';
    for (const [url, code] of [
      [refused.href, 75],
      [wrong.href, 5],
    ] as const) {
      const store = open(url);
      try {
        const error = await failure(store.read(COUNTERS));
        expect(error.exitCode).toBe(code);
        expect(error.message).toContain(`${server.hostname}:`);
        expect(error.message).not.toContain(pgPassword());
        expect(error.message).not.toContain('not-the-password');
      } finally {
        await store.close();
      }
    }
  });

  it('refuses a schema that a newer crux wrote', async () => {
    const url = freshStoreUrl();
    const store = open(url);
    try {
      await append(store, [{ ev: 'counter.put', data: { id: 'a', n: 1 } }]);
      const schema = new URL(url).searchParams.get('schema');
      psql(`insert into ${schema}.schema_version (version, crux_version) values (99, 'future')`);
      const later = open(url);
      const error = await failure(later.read(COUNTERS));
      expect(error.message).toMatch(/schema version 99, newer than this crux/);
      await later.close();
    } finally {
      await store.close();
    }
  });

  it('compacts to a snapshot and the live records, keeping the old rows in history', async () => {
    const url = freshStoreUrl();
    const store = open(url);
    try {
      for (let i = 0; i < 5; i++) {
        await store.write(async (tx) => {
          await tx.loadKey(COUNTERS, 'a');
          tx.append(COUNTERS, [{ ev: 'counter.added', data: { id: 'a', n: 1 } }]);
        }, TS);
      }
      const [report] = await store.compact([COUNTERS], TS);
      expect(report).toMatchObject({ before: { records: 5 }, after: { records: 2 } });
      expect(await store.read(COUNTERS)).toEqual(new Map([['a', 5]]));
      const [check] = await store.check([COUNTERS], { repair: false, ts: TS });
      expect(check!.problems).toEqual([]);
      const schema = new URL(url).searchParams.get('schema');
      expect(psql(`select count(*) from ${schema}.history`).trim()).toBe('5');
      await store.write(async (tx) => {
        await tx.loadKey(COUNTERS, 'a');
        tx.append(COUNTERS, [{ ev: 'counter.added', data: { id: 'a', n: 1 } }]);
      }, TS);
      expect((await store.readKey(COUNTERS, 'a')).get('a')).toBe(6);
      // Every version is still at hand, oldest first, restatements passed over.
      const versions: number[] = [];
      await store.readHistory(COUNTERS, (record) => versions.push(record.seq));
      expect(versions).toEqual([1, 2, 3, 4, 5, 8]);
      await store.compact([COUNTERS], TS, undefined, { dropHistory: true });
      expect(psql(`select count(*) from ${schema}.history`).trim()).toBe('0');
      expect((await store.read(COUNTERS)).get('a')).toBe(6);
    } finally {
      await store.close();
    }
  });

  it('check finds a tampered row; repair quarantines it and re-chains the rest', async () => {
    const url = freshStoreUrl();
    const store = open(url);
    try {
      await append(
        store,
        [1, 2, 3].map((n) => ({ ev: 'counter.put', data: { id: `k${n}`, n } })),
      );
      const schema = new URL(url).searchParams.get('schema');
      psql(`update ${schema}.journal_counters set body = replace(body, '"n":2', '"n":7') where line = 2`);
      const [bad] = await store.check([COUNTERS], { repair: false, ts: TS });
      expect(bad!.problems[0]).toEqual({ line: 2, reason: 'hash mismatch' });
      const [repaired] = await store.check([COUNTERS], { repair: true, ts: TS });
      expect(repaired!.repaired!.removed).toBeGreaterThan(0);
      const [again] = await store.check([COUNTERS], { repair: false, ts: TS });
      expect(again!.problems).toEqual([]);
      expect(again!.quarantined).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });

  it('restores lines into an empty store byte for byte, and refuses a store that has records', async () => {
    const source = open();
    const target = open();
    try {
      await append(source, [
        { ev: 'counter.put', data: { id: 'x', n: 1 } },
        { ev: 'counter.added', data: { id: 'x', n: 2 } },
      ]);
      await target.restore(COUNTERS.file, source.rawLines(COUNTERS.file));
      expect(await lines(target)).toEqual(await lines(source));
      expect(await target.readKey(COUNTERS, 'x')).toEqual(new Map([['x', 3]]));
      const error = await failure(target.restore(COUNTERS.file, source.rawLines(COUNTERS.file)));
      expect(error.exitCode).toBe(4);
    } finally {
      await source.close();
      await target.close();
    }
  });

  it('keeps a snapshot of a large journal; reads fold only the rows after it, and a rewrite voids it', async () => {
    let decodes = 0;
    const SNAP: StoreSpec<Counters> = {
      ...COUNTERS,
      file: 'snapped.jsonl',
      snapshot: {
        version: 1,
        encode: (state) => Buffer.from(JSON.stringify([...state])),
        decode: (body) => {
          decodes += 1;
          return new Map(JSON.parse(body.read(0, body.length).toString()));
        },
      },
    };
    const url = freshStoreUrl();
    const store = new PgStore(parseStoreUrl(url), { reporter: { warn: (m) => warnings.push(m) }, lockTimeoutMs: 5000, cruxVersion: 'test', specs: [SNAP] });
    const schema = new URL(url).searchParams.get('schema');
    try {
      await store.write(async (tx) => {
        await tx.load(SNAP);
        tx.append(
          SNAP,
          // Every entity live: a journal mostly dead would be compacted by this write (automatic compaction).
          Array.from({ length: 2100 }, (_, i) => ({ ev: 'counter.put', data: { id: `k${i}`, n: i } })),
        );
      }, TS);
      const expected = await store.read(SNAP);
      expect(psql(`select line from ${schema}.snapshots`).trim()).toBe('2100');
      expect(decodes).toBe(0);
      await store.write(async (tx) => {
        await tx.loadKey(SNAP, 'k1');
        tx.append(SNAP, [{ ev: 'counter.added', data: { id: 'k1', n: 5 } }]);
      }, TS);
      expected.set('k1', expected.get('k1')! + 5);
      expect(await store.read(SNAP)).toEqual(expected);
      expect(decodes).toBe(1);
      await store.compact([SNAP], TS);
      expect(await store.read(SNAP)).toEqual(expected);
      expect(decodes).toBe(1); // the snapshot named a row the compaction replaced: ignored
    } finally {
      await store.close();
    }
  });

  it('a transaction an earlier statement aborted is never acknowledged (COMMIT answers ROLLBACK, not an error)', async () => {
    const store = open();
    try {
      await append(store, [{ ev: 'counter.put', data: { id: 'a', n: 1 } }]);
      const error = await failure(
        store.transaction(async (sql) => {
          await sql`select 1/0`.catch(() => {});
        }),
      );
      expect(error.kind).toBe('store_unavailable');
      expect(error.message).toContain('rolled the transaction back');
      expect(await lines(store)).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('keeps key items: one of racing creators wins', async () => {
    const url = freshStoreUrl();
    const stores = Array.from({ length: 6 }, () => open(url));
    try {
      const results = await Promise.all(stores.map((s, i) => s.keys.create('handoff.key', Buffer.alloc(32, i))));
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect(Buffer.from((await stores[0]!.keys.read('handoff.key'))!)).toEqual(Buffer.alloc(32, winner));
      expect(await stores[1]!.keys.list()).toEqual(['handoff.key']);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it("doctor's survey names no table of crux's own as another file (the statistics row's table among them)", async () => {
    const store = open();
    try {
      await append(store, [{ ev: 'counter.put', data: { id: 'a', n: 1 } }]);
      const facts = await store.survey([COUNTERS]);
      expect(facts.journals.map((j) => j.file)).toEqual([COUNTERS.file]);
      expect(facts.other_files).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
