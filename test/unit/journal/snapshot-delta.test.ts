// The snapshot's delta (cache/cases.jsonl.state-delta): the records after the case bank's snapshot, folded once
// by a reader and applied by the next ones; damaged, stale, foreign or moved past by another writer, it never
// changes an answer (each read is compared with a replay of the journal alone).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CaseBank } from '../../../src/domain/case/bank';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { cachePath } from '../../../src/journal/derived/cache-file';
import { deltaName, writeDelta } from '../../../src/journal/derived/snapshot';
import { snapshotName } from '../../../src/journal/derived/snapshot';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import { freshDataDir, tempDir } from '../../helpers/cli';
import { crux } from '../../helpers/run-cli';
import { answers, caseBody, countingStore, read, replayed, TS, WORDS, writeOne as writeCases } from './case-bank-writes';

async function bankWithPending(pending: number) {
  const spec = countingStore();
  const dir = new DataDir(join(tempDir(), 'data'), { warn: () => {} }, 5_000);
  const base = Array.from({ length: 60 }, (_, i) => ({ ev: 'case.imported', data: caseBody(i, `base zeta ${WORDS[i % 8]} ${WORDS[(i * 3) % 8]}`) }));
  await dir.write((tx) => tx.append(spec, base), TS);
  for (let i = 0; i < pending; i++) await writeOne(dir, spec, i);
  return { spec, dir };
}

const writeOne = (dir: DataDir, spec: StoreSpec<CaseBank>, i: number) => writeCases(dir, spec, i, 60);
const deltaPath = (dir: DataDir) => cachePath(dir.root, deltaName('cases.jsonl'));

describe('the snapshot delta', () => {
  it('a reader folds the records after the snapshot once; the next ones apply its delta and answer as a replay does', async () => {
    const { spec, dir } = await bankWithPending(40);
    expect(fs.existsSync(deltaPath(dir)), 'writers leave the delta to readers').toBe(false);
    spec.folded = 0;
    const first = await read(dir, spec);
    expect(spec.folded).toBe(40);
    expect(fs.existsSync(deltaPath(dir))).toBe(true);
    spec.folded = 0;
    const second = await read(dir, spec);
    expect(spec.folded).toBe(0);
    expect(second).toEqual(first);
    expect(second).toEqual(replayed(dir));
    // Whole-store reads (case list) and a writer's whole load read through it too.
    spec.folded = 0;
    expect(answers(await dir.read(spec))).toEqual(replayed(dir));
    expect(spec.folded).toBe(0);
  });

  it('moved past by another writer: applied, the records after it folded, and replaced once enough follow', async () => {
    const { spec, dir } = await bankWithPending(20);
    await read(dir, spec);
    for (let i = 20; i < 25; i++) await writeOne(dir, spec, i);
    spec.folded = 0;
    expect(await read(dir, spec)).toEqual(replayed(dir));
    expect(spec.folded).toBe(5);
    const before = fs.readFileSync(deltaPath(dir));
    for (let i = 25; i < 45; i++) await writeOne(dir, spec, i);
    spec.folded = 0;
    expect(await read(dir, spec)).toEqual(replayed(dir));
    expect(spec.folded).toBe(25);
    expect(fs.readFileSync(deltaPath(dir)).equals(before)).toBe(false);
    spec.folded = 0;
    expect(await read(dir, spec)).toEqual(replayed(dir));
    expect(spec.folded).toBe(0);
  });

  it('damaged (a flipped bit in its header or body, truncated, emptied) is bypassed and replaced', async () => {
    const { spec, dir } = await bankWithPending(30);
    await read(dir, spec);
    const good = fs.readFileSync(deltaPath(dir));
    const damages: [string, (b: Buffer) => Buffer][] = [
      ['header bit', (b) => flip(b, 40)],
      ['body bit', (b) => flip(b, 512 + Math.floor((b.length - 512) / 2))],
      ['truncated', (b) => b.subarray(0, b.length - 9)],
      ['empty', () => Buffer.alloc(0)],
      ['zeroed body', (b) => Buffer.concat([b.subarray(0, 512), Buffer.alloc(b.length - 512)])],
    ];
    for (const [what, damage] of damages) {
      fs.writeFileSync(deltaPath(dir), damage(Buffer.from(good)));
      spec.folded = 0;
      expect(await read(dir, spec), what).toEqual(replayed(dir));
      expect(spec.folded, what).toBe(30);
      spec.folded = 0;
      expect(await read(dir, spec), what).toEqual(replayed(dir));
      expect(spec.folded, `${what}: replaced`).toBe(0);
    }
  });

  it('stale or foreign — another snapshot, another directory, an edited journal — never changes an answer', async () => {
    const { spec, dir } = await bankWithPending(30);
    await read(dir, spec);
    // A delta from another directory (its snapshot has another nonce): ignored.
    const other = await bankWithPending(30);
    await read(other.dir, other.spec);
    fs.copyFileSync(deltaPath(other.dir), deltaPath(dir));
    spec.folded = 0;
    expect(await read(dir, spec)).toEqual(replayed(dir));
    expect(spec.folded).toBe(30);
    // A new snapshot (a reader that replayed after the old one was lost): the old delta does not continue it.
    const kept = fs.readFileSync(deltaPath(dir));
    fs.rmSync(cachePath(dir.root, snapshotName('cases.jsonl')));
    await read(dir, spec);
    fs.writeFileSync(deltaPath(dir), kept);
    spec.folded = 0;
    expect(await read(dir, spec)).toEqual(replayed(dir));
    expect(spec.folded).toBe(0);
    // The journal edited under the delta's head (same length, not through crux): the replay's answer, damage and all.
    await expectEditedHeadTold(dir, spec);
  });

  it('after an in-process command on an encrypted store with its key, this plain store is written plain and its edited head told', async () => {
    // The cipher is the process's (configureCipher): a command run before in this module graph (an e2e file of
    // SHARED_GRAPH) must not leave its key sealing these writes, which hid the edit below (a flake, once).
    const key = join(tempDir(), 'store.key');
    expect((await crux(freshDataDir(), ['key', 'new', '--out', key])).exitCode).toBe(0);
    const sealed = freshDataDir();
    const imported = await crux(sealed, ['--key-file', key, 'case', 'import', '-'], { input: `${JSON.stringify(caseBody(0, 'late sealed task'))}\n` });
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(fs.readFileSync(join(sealed, 'cases.jsonl'), 'utf8')).not.toContain('late sealed task');
    const { spec, dir } = await bankWithPending(30);
    await read(dir, spec);
    await expectEditedHeadTold(dir, spec);
  });

  it('one that verifies but does not fit the snapshot (other counts, a slot out of range) is refused whole', async () => {
    const { spec, dir } = await bankWithPending(30);
    await read(dir, spec);
    const file = fs.readFileSync(deltaPath(dir));
    const header = JSON.parse(file.subarray(0, 503).toString().trim());
    const doc = JSON.parse(file.subarray(512).toString());
    for (const bad of [
      { ...doc, cachedSlots: doc.cachedSlots + 1 },
      { ...doc, killed: [...doc.killed, 10_000] },
      { ...doc, postings: [[0, [0]]] },
    ]) {
      writeDelta(dir.root, 'cases.jsonl', header.codec, header.base, header.binding, Buffer.from(JSON.stringify(bad)));
      spec.folded = 0;
      expect(await read(dir, spec)).toEqual(replayed(dir));
      expect(spec.folded).toBe(30);
    }
  });
});

/**
 * Writes 20 more records, reads (the delta then binds the last), edits the journal's head record in place (same
 * length, not through crux) and reads again: the replay's answer, and its hash mismatch told.
 */
async function expectEditedHeadTold(dir: DataDir, spec: StoreSpec<CaseBank>) {
  for (let i = 30; i < 50; i++) await writeOne(dir, spec, i);
  await read(dir, spec);
  const path = dir.path('cases.jsonl');
  const lines = fs.readFileSync(path, 'utf8').split('\n');
  const head = lines[lines.length - 2]!;
  lines[lines.length - 2] = head.replace('"late ', '"LATE ');
  // A no-op edit (the task sealed, say) would leave nothing to tell: the test would pass or fail for nothing.
  expect(lines[lines.length - 2], 'the edit changes the head record').not.toBe(head);
  fs.writeFileSync(path, lines.join('\n'));
  const warnings: string[] = [];
  const quiet = new DataDir(dir.root, { warn: (m) => warnings.push(m) }, 5_000);
  expect(await read(quiet, spec)).toEqual(replayed(quiet));
  expect(warnings.join('\n')).toContain('hash mismatch');
}

function flip(bytes: Buffer, at: number): Buffer {
  bytes[at] = bytes[at]! ^ 0x04;
  return bytes;
}
