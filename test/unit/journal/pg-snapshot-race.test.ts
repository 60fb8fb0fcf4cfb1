// A PostgreSQL reader's snapshot save against a row edited by hand while it folds (pg-fold.ts keepSnapshot): the
// journal's trigger deletes the snapshot row in the edit's transaction, and the save, made after, must not bring back
// a snapshot of the rows as they were. Deterministic: CRUX_TEST_SNAPSHOT_PAUSE holds the reader between its fold and
// its save while the test edits a row. Isolated (it sets process.env).
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import { freshStoreUrl, pgSkipReason, psql } from '../../helpers/pg';
import { COUNTERS, type Counters } from './counters';

const TS = '2026-12-01T09:00:00.000Z';
const SNAP: StoreSpec<Counters> = {
  ...COUNTERS,
  file: 'snapped.jsonl',
  snapshot: {
    version: 1,
    encode: (state) => Buffer.from(JSON.stringify([...state])),
    decode: (body) => new Map(JSON.parse(body.read(0, body.length).toString())),
  },
};
const ROWS = 2100;

async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 10) {
    if (waited > 30_000) throw new Error('the reader never reached its snapshot save');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A store holding ROWS puts (k0 = 0 … ), one batch, written by crux (its derived rows and guard made). */
async function seeded(): Promise<{ store: PgStore; schema: string; warnings: string[] }> {
  const url = freshStoreUrl('snaprace');
  const warnings: string[] = [];
  const store = new PgStore(parseStoreUrl(url), { reporter: { warn: (m) => warnings.push(m) }, lockTimeoutMs: 5000, cruxVersion: 'test', specs: [SNAP] });
  await store.write(async (tx) => {
    await tx.load(SNAP);
    tx.append(
      SNAP,
      Array.from({ length: ROWS }, (_, i) => ({ ev: 'counter.put', data: { id: `k${i}`, n: i } })),
    );
  }, TS);
  return { store, schema: new URL(url).searchParams.get('schema')!, warnings };
}

/** The snapshot rows a read would load: of this codec, naming a row of the journal as it is. */
const loadable = (schema: string) =>
  psql(
    `select count(*) from ${schema}.snapshots s join ${schema}.journal_snapped j on j.line = s.line and j.seq = s.seq and j.h = s.h where s.codec = 1`,
  ).trim();

describe.skipIf(pgSkipReason() !== undefined)('a PostgreSQL reader saving a snapshot while a row is edited by hand', () => {
  const pause = join(tmpdir(), `crux-snapshot-pause-${process.pid}`);
  afterEach(() => {
    delete process.env.CRUX_TEST_SNAPSHOT_PAUSE;
    fs.rmSync(pause, { force: true });
  });

  it('saves nothing when the edit came between its fold and its save: the stale state does not outlive the trigger', async () => {
    const { store, schema, warnings } = await seeded();
    try {
      process.env.CRUX_TEST_SNAPSHOT_PAUSE = pause;
      const reading = store.read(SNAP);
      await until(() => fs.existsSync(pause));
      // The reader has folded every row and holds k4 = 4; a hand edit of an earlier row (its hash no longer matches).
      psql(`update ${schema}.journal_snapped set body = replace(body, '"n":4}', '"n":400}') where line = 5`);
      fs.rmSync(pause);
      expect((await reading).get('k4')).toBe(4); // the answer of the rows as they were when it read them
      delete process.env.CRUX_TEST_SNAPSHOT_PAUSE;
      expect(loadable(schema)).toBe('0');
      // The next read folds the journal as it is now: the edited row told and passed over, not answered from a snapshot.
      warnings.length = 0;
      const after = await store.read(SNAP);
      expect(after.has('k4')).toBe(false);
      expect(after.get('k5')).toBe(5);
      expect(warnings.join('\n')).toMatch(/journal_snapped:5: /);
    } finally {
      await store.close();
    }
  });

  it('keeps its snapshot when nothing was edited, and the next read loads it', async () => {
    const { store, schema } = await seeded();
    try {
      process.env.CRUX_TEST_SNAPSHOT_PAUSE = pause;
      const reading = store.read(SNAP);
      await until(() => fs.existsSync(pause));
      fs.rmSync(pause);
      await reading;
      delete process.env.CRUX_TEST_SNAPSHOT_PAUSE;
      expect(loadable(schema)).toBe('1');
      expect(psql(`select line from ${schema}.snapshots`).trim()).toBe(String(ROWS));
    } finally {
      await store.close();
    }
  });

  it('a reader of a small journal writes nothing (no claim on a snapshot it will not keep)', async () => {
    const url = freshStoreUrl('snapsmall');
    const store = new PgStore(parseStoreUrl(url), { reporter: { warn: () => {} }, lockTimeoutMs: 5000, cruxVersion: 'test', specs: [SNAP] });
    const schema = new URL(url).searchParams.get('schema')!;
    try {
      await store.write(async (tx) => {
        await tx.load(SNAP);
        tx.append(SNAP, [{ ev: 'counter.put', data: { id: 'a', n: 1 } }]);
      }, TS);
      expect((await store.read(SNAP)).get('a')).toBe(1);
      expect(psql(`select count(*) from ${schema}.snapshots`).trim()).toBe('0');
    } finally {
      await store.close();
    }
  });
});
