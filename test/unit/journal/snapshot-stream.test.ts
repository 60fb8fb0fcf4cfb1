// The case bank's snapshot built by streaming after cache/ was lost (derived/snapshot-stream.ts): the first whole
// read folds nothing itself (the streamed snapshot covers the journal), answers as a replay does, and leaves the
// body a replay would have written; over a torn tail, damage in the middle, or a cache/ that cannot be written, the
// answer is still a replay's. The scan that builds it rebuilds a lost index too, and a writer that needs one key
// after cache/ was lost builds both in its index's scan (rebuild-lost.ts); what was not lost is not rebuilt.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CaseBank } from '../../../src/domain/case/bank';
import { CASE_STORE } from '../../../src/domain/case/store';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { cachePath } from '../../../src/journal/derived/cache-file';
import { openManifest } from '../../../src/journal/derived/index-base';
import { IndexRebuild } from '../../../src/journal/derived/rebuild';
import { snapshotCovers, snapshotName } from '../../../src/journal/derived/snapshot';
import { SnapshotRebuild, SnapshotUnbuilt } from '../../../src/journal/derived/snapshot-stream';
import { SpillFailed } from '../../../src/journal/derived/spill';
import type { Reporter } from '../../../src/journal/dir/load';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import { tempDir } from '../../helpers/cli';
import { answers, caseBody, countingStore, read, replayed, TS, WORDS, writeOne } from './case-bank-writes';

const collecting = (): Reporter & { told: string[] } => {
  const told: string[] = [];
  return { told, warn: (m) => told.push(m) };
};

async function seeded(reporter: Reporter = { warn: () => {} }) {
  const spec = countingStore();
  const dir = new DataDir(join(tempDir(), 'data'), reporter, 5_000);
  const base = Array.from({ length: 200 }, (_, i) => ({
    ev: 'case.imported',
    data: caseBody(i, `base zeta ${WORDS[i % 8]} ${WORDS[(i * 3) % 8]} 東京${i % 4}`),
  }));
  await dir.write((tx) => tx.append(spec, base), TS);
  for (let i = 0; i < 60; i++) await writeOne(dir, spec, i, 200);
  return { spec, dir, journal: join(dir.root, 'cases.jsonl') };
}

const loseCache = (dir: DataDir) => fs.rmSync(join(dir.root, 'cache'), { recursive: true, force: true });
const statePath = (dir: DataDir) => cachePath(dir.root, snapshotName('cases.jsonl'));
/** The names the derived files of a case journal take in cache/: the index file (manifest and log), its partitions (no scratch), and the snapshot when there is one. */
const derivedFilesOf = (dir: DataDir) => {
  const manifest = openManifest(dir.root, CASE_STORE);
  const parts = (manifest?.parts ?? []).map((run) => `cases.jsonl.idx.${run.id}`);
  const state = fs.existsSync(statePath(dir)) ? ['cases.jsonl.state'] : [];
  return [...(manifest === undefined ? [] : ['cases.jsonl.idx']), ...parts, ...state].sort();
};
/** The snapshot's body: its last body_bytes bytes. */
const bodyOf = (dir: DataDir) => {
  const bytes = fs.readFileSync(statePath(dir));
  const header = JSON.parse(bytes.subarray(0, 503).toString());
  return bytes.subarray(bytes.length - header.body_bytes);
};

describe('a lost snapshot built by streaming', () => {
  beforeEach(() => {
    process.env.CRUX_TEST_STREAM_BYTES = '1';
  });
  afterEach(() => {
    delete process.env.CRUX_TEST_STREAM_BYTES;
  });

  /**
   * Loses cache/ and reads the whole bank: the read folds nothing itself and answers as a replay; then the same read
   * with streaming off replays and writes the snapshot from the replay: the same body. The first answer.
   */
  async function streamsAsReplayWrites(spec: ReturnType<typeof countingStore>, dir: DataDir) {
    loseCache(dir);
    spec.folded = 0;
    const first = await read(dir, spec);
    expect(spec.folded, 'the streamed snapshot covers the whole journal').toBe(0);
    expect(first).toEqual(replayed(dir));
    const streamed = bodyOf(dir);
    expect(snapshotCovers(dir.root, 'cases.jsonl')).toBe(fs.statSync(join(dir.root, 'cases.jsonl')).size);
    loseCache(dir);
    process.env.CRUX_TEST_STREAM_BYTES = String(2 ** 50);
    spec.folded = 0;
    expect(await read(dir, spec)).toEqual(first);
    expect(spec.folded).toBeGreaterThan(0);
    expect(bodyOf(dir).equals(streamed)).toBe(true);
    return first;
  }

  it('the first whole read folds nothing itself, answers as a replay, and leaves the body a replay writes', async () => {
    const { spec, dir } = await seeded();
    const first = await streamsAsReplayWrites(spec, dir);
    // Whole-store reads (case list) stream it too.
    loseCache(dir);
    process.env.CRUX_TEST_STREAM_BYTES = '1';
    spec.folded = 0;
    expect(answers(await dir.read(spec))).toEqual(first);
    expect(spec.folded).toBe(0);
  });

  it('over a compacted journal (its journal.snapshot record first): the body a replay writes', async () => {
    const { spec, dir } = await seeded();
    await dir.compact([CASE_STORE], TS);
    await writeOne(dir, spec, 70, 200);
    expect(fs.readFileSync(join(dir.root, 'cases.jsonl'), 'utf8')).toContain('"ev":"journal.snapshot"');
    await streamsAsReplayWrites(spec, dir);
  });

  it('spilling its sorts in runs of 64 entries: the same body, and only the snapshot and the index left in cache/ (scratch files unlinked at once)', async () => {
    const { spec, dir } = await seeded();
    // Ids with many events far apart in the journal: their events come back from different runs.
    for (let i = 0; i < 40; i++) await writeOne(dir, spec, 100 + i, 7);
    const one = (draft: object) => dir.write((tx) => tx.append(spec, [draft as never]), TS);
    // Orders a sort by kind would get wrong: deleted then recorded again (live), re-counted then recorded again (the new count).
    const apart = async () => {
      for (let i = 0; i < 70; i++) await one({ ev: 'case.recorded', data: caseBody(9000 + i, `filler ${WORDS[i % 8]}`) });
    };
    await one({ ev: 'case.deleted', data: { case_id: 'c_1' } });
    await one({ ev: 'case.reused', data: { case_id: 'c_2', times_reused: 9 } });
    await one({ ev: 'case.reused', data: { case_id: 'c_3', times_reused: 8 } });
    await apart();
    await one({ ev: 'case.recorded', data: caseBody(1, 'back again alpha') });
    await one({ ev: 'case.recorded', data: caseBody(2, 'recorded anew beta') });
    await apart();
    await one({ ev: 'case.reused', data: { case_id: 'c_3', times_reused: 2 } });
    loseCache(dir);
    process.env.CRUX_TEST_REBUILD_ENTRIES = '64';
    try {
      expect(await read(dir, spec)).toEqual(replayed(dir));
    } finally {
      delete process.env.CRUX_TEST_REBUILD_ENTRIES;
    }
    expect(fs.readdirSync(join(dir.root, 'cache')).sort()).toEqual(derivedFilesOf(dir));
    const streamed = bodyOf(dir);
    loseCache(dir);
    process.env.CRUX_TEST_STREAM_BYTES = String(2 ** 50);
    await read(dir, spec);
    expect(bodyOf(dir).equals(streamed)).toBe(true);
  });

  it('over a batch whose last record is missing: the snapshot ends before it, the answer is a replay’s', async () => {
    const { spec, dir, journal } = await seeded();
    const batch = Array.from({ length: 3 }, (_, i) => ({ ev: 'case.recorded', data: caseBody(5000 + i, `torn brandnew ${WORDS[i]}`) }));
    await dir.write((tx) => tx.append(spec, batch), TS);
    const text = fs.readFileSync(journal);
    const cut = text.lastIndexOf('\n', text.length - 2) + 1;
    fs.truncateSync(journal, cut);
    loseCache(dir);
    const first = await read(dir, spec);
    expect(first).toEqual(replayed(dir));
    expect(JSON.stringify(first)).not.toContain('c_5000');
    // The batch's first record starts where the snapshot ends.
    const covers = snapshotCovers(dir.root, 'cases.jsonl')!;
    expect(text.subarray(covers, covers + 200).toString()).toContain('"batch":3');
  });

  it('over damage in the middle: nothing streamed is kept, the replay answers and reports it', async () => {
    const reporter = collecting();
    const { spec, dir, journal } = await seeded(reporter);
    const text = fs.readFileSync(journal, 'utf8');
    const at = text.indexOf('base zeta', text.length / 3);
    fs.writeFileSync(journal, `${text.slice(0, at)}BASE${text.slice(at + 4)}`);
    loseCache(dir);
    reporter.told.length = 0;
    const first = await read(dir, spec);
    expect(first).toEqual(replayed(dir));
    expect(reporter.told.some((m) => /cases\.jsonl:\d+:/.test(m))).toBe(true);
  });

  it('with a cache/ that is not a directory: the replay answers', async () => {
    const { spec, dir } = await seeded();
    loseCache(dir);
    fs.writeFileSync(join(dir.root, 'cache'), 'not a directory');
    expect(await read(dir, spec)).toEqual(replayed(dir));
    expect(fs.readFileSync(join(dir.root, 'cache'), 'utf8')).toBe('not a directory');
  });

  it('a writer that needs one key after cache/ was lost builds the index and the snapshot in one scan', async () => {
    const { spec, dir } = await seeded();
    loseCache(dir);
    spec.folded = 0;
    await writeOne(dir, spec, 61, 200);
    expect(fs.existsSync(statePath(dir)), 'the snapshot, built in the scan that rebuilt the index').toBe(true);
    expect(fs.readdirSync(join(dir.root, 'cache')).sort()).toEqual(derivedFilesOf(dir));
    // The snapshot covers the journal up to the write: a whole read folds the written record alone.
    spec.folded = 0;
    expect(await read(dir, spec)).toEqual(replayed(dir));
    expect(spec.folded).toBe(1);
  });

  it('a writer that needs the bank after cache/ was lost streams the snapshot and rebuilds the index in the same scan', async () => {
    const { spec, dir } = await seeded();
    loseCache(dir);
    spec.folded = 0;
    await dir.write(async (tx) => {
      await tx.loadTerms(spec as StoreSpec<CaseBank>, { terms: ['alpha'] } as never);
      tx.append(spec, [{ ev: 'case.recorded', data: caseBody(7000, 'alpha by a whole writer') } as never]);
    }, TS);
    expect(spec.folded, 'the writer loaded the streamed snapshot, and folded its own record').toBe(1);
    expect(fs.existsSync(statePath(dir))).toBe(true);
    expect(openManifest(dir.root, spec), 'the index, rebuilt in the same scan').toBeDefined();
    expect(await read(dir, spec)).toEqual(replayed(dir));
    spec.folded = 0;
    await writeOne(dir, spec, 62, 200);
    expect(spec.folded, 'the next writer by key reads its case’s own lines through the index, not the journal').toBeLessThanOrEqual(3);
  });

  it('a reader of one key after cache/ was lost (case show) rebuilds both in one scan, over a torn batch too', async () => {
    const { spec, dir, journal } = await seeded();
    const batch = Array.from({ length: 3 }, (_, i) => ({ ev: 'case.recorded', data: caseBody(5 + i, `torn rewrite ${WORDS[i]}`) }));
    await dir.write((tx) => tx.append(spec, batch), TS);
    const text = fs.readFileSync(journal);
    fs.truncateSync(journal, text.lastIndexOf('\n', text.length - 2) + 1);
    loseCache(dir);
    const truth = dir.replay(CASE_STORE, { quiet: true }).state;
    const bodyIn = (bank: CaseBank, id: string) => bank.bodies.get(bank.slotOf(id)!);
    const bank = await dir.readKey(spec, 'c_5');
    expect(bodyIn(bank, 'c_5')).toEqual(bodyIn(truth, 'c_5'));
    expect(JSON.stringify(bodyIn(bank, 'c_5'))).not.toContain('torn rewrite');
    expect(fs.readdirSync(join(dir.root, 'cache')).sort()).toEqual(derivedFilesOf(dir));
    expect(fs.existsSync(statePath(dir))).toBe(true);
    spec.folded = 0;
    expect(await read(dir, spec)).toEqual(replayed(dir));
    expect(spec.folded, 'the snapshot covers the journal up to the torn batch').toBe(0);
    // The index left out the torn batch's lines: c_6 reads as before it, through the index.
    expect(bodyIn(await dir.readKey(spec, 'c_6'), 'c_6')).toEqual(bodyIn(truth, 'c_6'));
  });

  it('what was not lost is not rebuilt: a lost snapshot alone waits for the next whole read; a lost index alone leaves the snapshot as it is', async () => {
    const { spec, dir } = await seeded();
    // The snapshot alone lost: a writer by key goes through the index, and scans nothing.
    await read(dir, spec);
    fs.rmSync(statePath(dir));
    await writeOne(dir, spec, 61, 200);
    expect(fs.existsSync(statePath(dir))).toBe(false);
    expect(await read(dir, spec)).toEqual(replayed(dir));
    // The index alone lost: the writer by key rebuilds it; the snapshot is the same file.
    const snapshot = fs.statSync(statePath(dir)).ino;
    for (const name of fs.readdirSync(join(dir.root, 'cache'))) if (name.includes('.idx')) fs.rmSync(join(dir.root, 'cache', name));
    await writeOne(dir, spec, 62, 200);
    expect(openManifest(dir.root, spec)).toBeDefined();
    expect(fs.statSync(statePath(dir)).ino).toBe(snapshot);
    expect(await read(dir, spec)).toEqual(replayed(dir));
  });

  it('the part taken along that cannot be built is given up alone: the other is built, the answer is a replay’s, no scratch is left', async () => {
    const { spec, dir } = await seeded();
    let calls = 0;
    // The snapshot, taken along by a writer's index rebuild, fails half way.
    loseCache(dir);
    const failing = vi.spyOn(SnapshotRebuild.prototype, 'keep').mockImplementation(() => {
      if (++calls > 50) throw new SnapshotUnbuilt('a test');
      return 0;
    });
    try {
      await writeOne(dir, spec, 61, 200);
    } finally {
      failing.mockRestore();
    }
    expect(calls).toBeGreaterThan(50);
    expect(fs.existsSync(statePath(dir))).toBe(false);
    expect(fs.readdirSync(join(dir.root, 'cache')).sort()).toEqual(derivedFilesOf(dir));
    expect(await read(dir, spec)).toEqual(replayed(dir));
    // The index, taken along by a reader's streamed snapshot, fails half way.
    loseCache(dir);
    calls = 0;
    const keep = IndexRebuild.prototype.keep;
    const failingIndex = vi.spyOn(IndexRebuild.prototype, 'keep').mockImplementation(function (this: IndexRebuild<unknown>, ...args) {
      if (++calls > 50) throw new SpillFailed('a test');
      return keep.apply(this, args);
    });
    try {
      expect(await read(dir, spec)).toEqual(replayed(dir));
    } finally {
      failingIndex.mockRestore();
    }
    expect(calls).toBeGreaterThan(50);
    expect(fs.readdirSync(join(dir.root, 'cache')).sort()).toEqual(['cases.jsonl.state']);
    // The snapshot, leading a reader's scan, cannot be written at its end: the index taken along is installed.
    loseCache(dir);
    const unwritten = vi.spyOn(SnapshotRebuild.prototype, 'finish').mockImplementation(function (this: SnapshotRebuild) {
      this.close();
      throw new SnapshotUnbuilt('a test');
    });
    const finishIndex = IndexRebuild.prototype.finish;
    const installed: boolean[] = [];
    const indexFinished = vi.spyOn(IndexRebuild.prototype, 'finish').mockImplementation(function (this: IndexRebuild<unknown>, ...args) {
      installed.push(finishIndex.apply(this, args));
      return installed.at(-1)!;
    });
    try {
      expect(await read(dir, spec)).toEqual(replayed(dir));
    } finally {
      unwritten.mockRestore();
      indexFinished.mockRestore();
    }
    expect(installed, 'the index taken along, installed by the scan').toEqual([true]);
    expect(openManifest(dir.root, spec)).toBeDefined();
  });
});
