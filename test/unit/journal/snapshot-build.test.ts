// The snapshot rewritten in bounded steps (cache/cases.jsonl.state-build, .state-next): writes past the snapshot
// start a rewrite and each takes one bounded step of it; every answer meanwhile and after equals a replay; damaged,
// stale, foreign or half-written build files, and a step done twice (a crash before its build file was saved), never
// change an answer; a decision that meets a damaged page of a snapshot read on demand is made again from a replay.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CaseBank } from '../../../src/domain/case/bank';
import { CASE_STORE, retrieveCases } from '../../../src/domain/case/store';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { cachePath } from '../../../src/journal/derived/cache-file';
import { buildName, nextName } from '../../../src/journal/derived/snapshot-build';
import { snapshotFacts, snapshotLayout, snapshotName } from '../../../src/journal/derived/snapshot';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import type { Instant } from '../../../src/shared/time';
import { FULL, tempDir } from '../../helpers/cli';
import { answers, caseBody, countingStore, read, replayed, TS, WORDS, writeOne as writeCases } from './case-bank-writes';

const STEP = 1500;
const BASE = 400;

async function store() {
  const spec = countingStore();
  const dir = new DataDir(join(tempDir(), 'data'), { warn: () => {} }, 5_000);
  const base = Array.from({ length: BASE }, (_, i) => ({
    ev: 'case.imported',
    data: caseBody(i, `base zeta ${WORDS[i % 8]} ${WORDS[(i * 3) % 8]} w${i % 29}`),
  }));
  await dir.write((tx) => tx.append(spec, base), TS);
  return { spec, dir };
}

const writeOne = (dir: DataDir, spec: StoreSpec<CaseBank>, i: number) => writeCases(dir, spec, i, BASE);
const file = (dir: DataDir, name: (f: string) => string) => cachePath(dir.root, name('cases.jsonl'));
const sizeOf = (path: string) => (fs.existsSync(path) ? fs.statSync(path).size : 0);
const nonceOf = (dir: DataDir) => snapshotFacts(dir.root, 'cases.jsonl')?.nonce;

/** Writes until the build under way installs a new snapshot (at most `limit` writes); the writes it took. */
async function untilInstalled(dir: DataDir, spec: StoreSpec<CaseBank>, from: number, limit = 400): Promise<number> {
  const before = nonceOf(dir);
  for (let i = from; i < from + limit; i++) {
    await writeOne(dir, spec, i);
    if (nonceOf(dir) !== before) return i + 1;
  }
  throw new Error('no snapshot installed');
}

describe('the snapshot rewritten in steps', () => {
  beforeEach(() => {
    process.env.CRUX_TEST_SNAPSHOT_STEP_BYTES = String(STEP);
    process.env.CRUX_TEST_SNAPSHOT_TAIL_BYTES = '2048';
  });
  afterEach(() => {
    delete process.env.CRUX_TEST_SNAPSHOT_STEP_BYTES;
    delete process.env.CRUX_TEST_SNAPSHOT_TAIL_BYTES;
  });

  it('takes one bounded step a write, installs the new snapshot at the end, and answers as a replay throughout', async () => {
    const { spec, dir } = await store();
    const bodyBytes = snapshotFacts(dir.root, 'cases.jsonl')!.bodyBytes;
    const nonces = new Set([nonceOf(dir)]);
    let stepped = 0;
    let biggest = 0;
    let last = 0;
    for (let i = 0; i < 240; i++) {
      await writeOne(dir, spec, i);
      const size = sizeOf(file(dir, nextName));
      if (size > last) {
        stepped += 1;
        biggest = Math.max(biggest, size - last);
      }
      last = size;
      const nonce = nonceOf(dir);
      if (!nonces.has(nonce)) {
        // Just installed by the write's last step: it verifies (a whole read folds only the records after it).
        spec.folded = 0;
        expect(answers(await dir.read(spec)), `installed at write ${i}`).toEqual(replayed(dir));
        expect(spec.folded, `installed at write ${i}: read, not replayed`).toBeLessThan(BASE);
        nonces.add(nonce);
      }
      if (i % 12 === 0) expect(await read(dir, spec), `after write ${i}`).toEqual(replayed(dir));
    }
    // Several rewrites, each over many writes; no write wrote more than about two steps' worth of the new body.
    expect(nonces.size).toBeGreaterThanOrEqual(3);
    expect(stepped).toBeGreaterThan(3 * (nonces.size - 1));
    expect(biggest).toBeLessThanOrEqual(2 * STEP + 1024);
    expect(biggest).toBeLessThan(bodyBytes / 4);
    expect(await read(dir, spec)).toEqual(replayed(dir));
    expect(answers(await dir.read(spec))).toEqual(replayed(dir));
  });

  it('a step done again (a crash before the build file was saved) writes the same bytes: the snapshot verifies', async () => {
    const { spec, dir } = await store();
    let i = 0;
    while (!fs.existsSync(file(dir, buildName))) await writeOne(dir, spec, i++);
    for (let k = 0; k < 6; k++) {
      const saved = fs.readFileSync(file(dir, buildName));
      await writeOne(dir, spec, i++);
      // The step's bytes are in .state-next, but the build file says it was not taken: the next write takes it again.
      if (fs.existsSync(file(dir, buildName))) fs.writeFileSync(file(dir, buildName), saved);
    }
    i = await untilInstalled(dir, spec, i);
    spec.folded = 0;
    expect(answers(await dir.read(spec))).toEqual(replayed(dir));
    expect(spec.folded, 'the new snapshot verified').toBeLessThan(i);
  });

  it('damaged, removed, stale or foreign build files never change an answer; the rewrite starts again', async () => {
    const { spec, dir } = await store();
    let i = 0;
    // A build some steps in (its new snapshot partly written).
    const underWay = async () => {
      while (sizeOf(file(dir, nextName)) < 3 * STEP || !fs.existsSync(file(dir, buildName))) await writeOne(dir, spec, i++);
    };
    const damages: [string, () => void][] = [
      ['build file bit', () => flipFile(file(dir, buildName), 600)],
      ['build file header', () => flipFile(file(dir, buildName), 30)],
      ['build file truncated', () => fs.truncateSync(file(dir, buildName), 700)],
      ['build file removed', () => fs.rmSync(file(dir, buildName))],
      ['new snapshot removed', () => fs.rmSync(file(dir, nextName))],
      ['new snapshot bit', () => flipFile(file(dir, nextName), sizeOf(file(dir, nextName)) - 100)],
      ['new snapshot truncated', () => fs.truncateSync(file(dir, nextName), sizeOf(file(dir, nextName)) - 700)],
    ];
    // `npm test`: a bit of the build file, the build file removed, the new snapshot cut short (a damage of each file
    // and a removal); CI's run (FULL): all seven.
    for (const [what, damage] of FULL ? damages : [damages[0]!, damages[3]!, damages[6]!]) {
      await underWay();
      damage();
      i = await untilInstalled(dir, spec, i);
      expect(await read(dir, spec), what).toEqual(replayed(dir));
      expect(answers(await dir.read(spec)), what).toEqual(replayed(dir));
      expect(answers(await dir.read(spec)), `${what}: again`).toEqual(replayed(dir));
    }
    // Foreign: another directory's build (its snapshot has another nonce) is dropped, not continued.
    const other = await store();
    let j = 0;
    while (sizeOf(file(other.dir, nextName)) < 3 * STEP || !fs.existsSync(file(other.dir, buildName))) await writeOne(other.dir, other.spec, j++);
    await underWay();
    fs.copyFileSync(file(other.dir, buildName), file(dir, buildName));
    fs.copyFileSync(file(other.dir, nextName), file(dir, nextName));
    await writeOne(dir, spec, i++);
    expect(fs.existsSync(file(dir, buildName)), 'a foreign build is dropped').toBe(false);
    expect(await read(dir, spec)).toEqual(replayed(dir));
    // Stale: the journal compacted under a build (its snapshot replaced): dropped.
    await underWay();
    await dir.compact([CASE_STORE], TS);
    expect(fs.existsSync(file(dir, buildName))).toBe(false);
    await writeOne(dir, spec, i++);
    expect(await read(dir, spec)).toEqual(replayed(dir));
    expect(answers(await dir.read(spec))).toEqual(replayed(dir));
  });

  it('a write that meets a damaged page of the snapshot it reads on demand decides again from a replay, and writes once', async () => {
    const { spec, dir } = await store();
    damagePagesAfterDecode(dir);
    const before = fs.readFileSync(dir.path('cases.jsonl'), 'utf8').split('\n').length;
    const scope = { dir, now: Date.parse(TS) as unknown as Instant };
    const expected = replayed(dir).ranked[0]!.slice(0, 5);
    const hits = await retrieveCases(scope, { text: 'alpha beta', topK: 5, onlySuccess: false, minSimilarity: 0 }, true);
    expect(hits.map((h) => [h.case.case_id, h.similarity])).toEqual(expected);
    const lines = fs.readFileSync(dir.path('cases.jsonl'), 'utf8').split('\n');
    expect(lines.length - before, 'one batch of 5 reuse records').toBe(5);
    expect(dir.replay(CASE_STORE, { quiet: true }).scan.problems).toEqual([]);
    expect(await read(dir, spec)).toEqual(replayed(dir));
  });
});

function flipFile(path: string, at: number): void {
  const bytes = fs.readFileSync(path);
  bytes[at] = bytes[at]! ^ 0x10;
  fs.writeFileSync(path, bytes);
}

/** Flips a byte in every page of the snapshot's body but those a decode reads (the head, the vocabulary, postStart). */
function damagePagesAfterDecode(dir: DataDir): void {
  const path = cachePath(dir.root, snapshotName('cases.jsonl'));
  const bytes = fs.readFileSync(path);
  const { bodyBytes } = snapshotFacts(dir.root, 'cases.jsonl')!;
  const { bodyAt, pages } = snapshotLayout(bodyBytes);
  const head = JSON.parse(bytes.toString('utf8', bodyAt, bytes.indexOf(10, bodyAt)));
  const pad8 = (n: number) => (n + 7) & ~7;
  const starts: number[] = [];
  let at = pad8(bytes.indexOf(10, bodyAt) - bodyAt + 1);
  for (const length of head.sections as number[]) {
    starts.push(at);
    at = pad8(at + length);
  }
  // Sections: ids, vocab, idStarts, reward, created, success, reused, termCount, recOffset, recLength, recLine, postStart, …
  const kept = new Set<number>([0]);
  for (const s of [1, 11]) for (let p = Math.floor(starts[s]! / 4096); p <= Math.floor((starts[s]! + head.sections[s]) / 4096); p++) kept.add(p);
  for (let p = 0; p < pages; p++) if (!kept.has(p)) bytes[bodyAt + p * 4096 + 1] = bytes[bodyAt + p * 4096 + 1]! ^ 0x01;
  fs.writeFileSync(path, bytes);
}
