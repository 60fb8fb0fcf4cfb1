// The derived layer's structures: checksummed headers, sorted pages, the delta log, and a store's index read
// through DataDir — every damage to a derived file is detected and the answer stays a replay's.
import * as fs from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { cachePath, decodeHeader, encodeHeader, HEADER_BYTES, writeCacheFile } from '../../../src/journal/derived/cache-file';
import { appendBlock, chainStart, encodeBlock, encodeLog, parseLog, readLog } from '../../../src/journal/derived/block-log';
import { ENTRY_WORDS, EntryList, sortKey, textKey, textRange } from '../../../src/journal/derived/entries';
import { DerivedDamage, encodePages, PAGE_BYTES, SortedTable } from '../../../src/journal/derived/sorted-table';
import { indexName, openIndexFile, openManifest, openRun } from '../../../src/journal/derived/index-base';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import { FULL, propertyRuns, tempDir } from '../../helpers/cli';
import { VOCAB } from './fixtures';

const TS = '2026-11-29T21:00:00.000Z';

describe('checksums and headers', () => {
  it('a header that is flipped, torn or zeroed anywhere does not decode', () => {
    const header = encodeHeader({ kind: 'x', n: 1 });
    expect(header.length).toBe(HEADER_BYTES);
    expect(decodeHeader(header)).toEqual({ kind: 'x', n: 1 });
    for (let at = 0; at < HEADER_BYTES; at += 37) {
      const flipped = Buffer.from(header);
      flipped[at]! ^= 0x10;
      expect(decodeHeader(flipped)).toBeUndefined();
    }
    expect(decodeHeader(header.subarray(0, 300))).toBeUndefined();
    expect(decodeHeader(Buffer.alloc(HEADER_BYTES))).toBeUndefined();
  });
});

function sortedEntries(n: number): Uint32Array {
  const list = new EntryList(n);
  for (let i = 0; i < n; i++) {
    const [hi, lo] = sortKey(0, `key${i % (n / 2)}`);
    list.push(hi, lo, 0, i, 10, i + 1, 0, 0);
  }
  return list.sorted();
}

function openTable(words: Uint32Array, nonce = 7): { table: SortedTable; path: string; bytes: Buffer } {
  const path = join(tempDir(), 't.idx');
  const pages = encodePages(words, nonce);
  const bytes = pages;
  fs.writeFileSync(path, bytes);
  const fd = fs.openSync(path, 'r');
  return { table: new SortedTable(fd, nonce, pages.length / PAGE_BYTES, words.length / ENTRY_WORDS), path, bytes };
}

describe('prefixed text keys', () => {
  const atOrBefore = (a: [number, number], b: [number, number]) => a[0] < b[0] || (a[0] === b[0] && a[1] <= b[1]);
  it('keep UTF-16 order (as JS compares strings), and put every text that starts with a prefix in its range', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 12 }), (a, b) => {
        const [x, y] = a < b ? [a, b] : [b, a];
        expect(atOrBefore(textKey(3, x), textKey(3, y))).toBe(true);
        const [fromHi, fromLo, toHi, toLo] = textRange(3, x);
        const inside = (t: string) => atOrBefore([fromHi, fromLo], textKey(3, t)) && atOrBefore(textKey(3, t), [toHi, toLo]);
        expect(inside(x + y)).toBe(true);
        expect(inside(x)).toBe(true);
        // A text outside the range does not start with the prefix.
        if (!inside(y)) expect(y.startsWith(x)).toBe(false);
      }),
      { numRuns: propertyRuns(2000) },
    );
    // Within its space.
    expect(textKey(3, '\uffff\uffff\uffff')[0]! >>> 24).toBe(3);
  });
});

describe('sorted table', () => {
  it('finds every key by positioned page reads, as a scan of the entries would', () => {
    const words = sortedEntries(2000);
    const { table } = openTable(words);
    for (const i of [0, 1, 17, 500, 999]) {
      const [hi, lo] = sortKey(0, `key${i}`);
      const found: number[] = [];
      table.range(hi, lo, hi, lo, (w, j) => found.push(w[j * ENTRY_WORDS + 3]!));
      expect(found.sort((a, b) => a - b)).toEqual([i, i + 1000]);
    }
    const [hi, lo] = sortKey(0, 'absent');
    let none = 0;
    table.range(hi, lo, hi, lo, () => none++);
    expect(none).toBe(0);
  });

  it('finds the first page of a key however the keys lie: even, bunched, long runs of one key (property)', () => {
    // Keys as (hi, lo) from a few shapes: hashes (even: the search interpolates), a run of equal keys across
    // pages, a cluster far from the rest, and powers (uneven: it must fall back to halving and still be exact).
    const shape = fc.constantFrom('even', 'runs', 'cluster', 'powers');
    fc.assert(
      fc.property(
        shape,
        fc.integer({ min: 1, max: 1500 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 12 }),
        fc.constantFrom('none', 'true', 'wrong'),
        (kind, n, probes, bounds) => {
          const list = new EntryList(n);
          for (let i = 0; i < n; i++) {
            const [hi, lo] =
              kind === 'even'
                ? sortKey(0, `k${i}`)
                : kind === 'runs'
                  ? [5, Math.floor(i / 300)]
                  : kind === 'cluster'
                    ? i < n - 3
                      ? [1, i]
                      : [0xffffff00, i]
                    : [Math.min(0xffffffff, 2 ** Math.floor(i / 40)), i % 7];
            list.push(hi, lo, 0, i, 10, i + 1, 0, 0);
          }
          const words = list.sorted();
          const { table } = openTable(words);
          const keys = Array.from({ length: n }, (_, i) => [words[i * ENTRY_WORDS]!, words[i * ENTRY_WORDS + 1]!] as const);
          // Bounds as a partition's manifest gives them (its first key, the next one's), or wrong ones: never an answer.
          if (bounds === 'true') table.bound([...keys[0]!], [keys[n - 1]![0], keys[n - 1]![1] + 1]);
          if (bounds === 'wrong') table.bound([0xfffffff0, 0], [3, 3]);
          for (const probe of probes) {
            // An existing key, or one just past it (absent, or the next one's).
            const [hi, lo] = keys[probe % n]!;
            for (const [qh, ql] of [
              [hi, lo],
              [hi, (lo + 1) >>> 0],
            ] as const) {
              const found: number[] = [];
              table.range(qh, ql, qh, ql, (w, j) => found.push(w[j * ENTRY_WORDS + 3]!));
              const expected = keys.flatMap(([h, l], i) => (h === qh && l === ql ? [words[i * ENTRY_WORDS + 3]!] : []));
              expect(found).toEqual(expected);
              const after: number[] = [];
              table.spans(qh, ql, 0xffffffff, 0xffffffff, (w, start, end) => {
                for (let j = start; j < end; j++) after.push(w[j * ENTRY_WORDS + 3]!);
              });
              expect(after).toEqual(keys.flatMap(([h, l], i) => (h > qh || (h === qh && l >= ql) ? [words[i * ENTRY_WORDS + 3]!] : [])));
              // Highest first, from the key down (a run of equal keys may span pages: all of it), and the run alone.
              const atMost = (i: number) => keys[i]![0] < qh || (keys[i]![0] === qh && keys[i]![1] <= ql);
              for (const [fh, fl, within] of [
                [0, 0, atMost],
                [qh, ql, (i: number) => atMost(i) && keys[i]![0] === qh && keys[i]![1] === ql],
              ] as const) {
                const down: number[] = [];
                for (const [w, start, end] of table.spansDown(fh, fl, qh, ql)) for (let j = end - 1; j >= start; j--) down.push(w[j * ENTRY_WORDS + 3]!);
                expect(down).toEqual(keys.flatMap((_, i) => (within(i) ? [words[i * ENTRY_WORDS + 3]!] : [])).reverse());
              }
            }
          }
        },
      ),
      { numRuns: propertyRuns(400) },
    );
  });

  it('reads a range as spans of pages, read ahead, as an entry-by-entry range does', () => {
    const words = sortedEntries(4000);
    const { table } = openTable(words);
    const [fromHi, fromLo] = [0, 0];
    for (const [toHi, toLo] of [
      sortKey(0, 'key3'),
      [0xffffffff, 0xffffffff] as [number, number],
      [words[ENTRY_WORDS * 1234]!, words[ENTRY_WORDS * 1234 + 1]!] as [number, number],
    ]) {
      const one: number[] = [];
      table.range(fromHi, fromLo, toHi, toLo, (w, j) => one.push(w[j * ENTRY_WORDS + 3]!));
      const spans: number[] = [];
      table.spans(fromHi, fromLo, toHi, toLo, (w, start, end) => {
        for (let j = start; j < end; j++) spans.push(w[j * ENTRY_WORDS + 3]!);
      });
      expect(spans).toEqual(one);
    }
  });

  it('refuses a page that is flipped, zeroed, or from another file', () => {
    const words = sortedEntries(2000);
    const { bytes, path } = openTable(words, 7);
    const damaged = (mutate: (b: Buffer) => void, nonce = 7) => {
      const copy = Buffer.from(bytes);
      mutate(copy);
      fs.writeFileSync(path, copy);
      const table = new SortedTable(fs.openSync(path, 'r'), nonce, bytes.length / PAGE_BYTES, 2000);
      return () => table.eachPage(() => {});
    };
    // A page read ahead by a long range is verified as it is used.
    const spanned = (mutate: (b: Buffer) => void) => {
      const copy = Buffer.from(bytes);
      mutate(copy);
      fs.writeFileSync(path, copy);
      const table = new SortedTable(fs.openSync(path, 'r'), 7, bytes.length / PAGE_BYTES, 2000);
      return () => table.spans(0, 0, 0xffffffff, 0xffffffff, () => {});
    };
    expect(spanned(() => {})).not.toThrow();
    expect(spanned((b) => (b[9 * PAGE_BYTES + 100]! ^= 1))).toThrow(DerivedDamage);
    expect(spanned((b) => b.fill(0, 12 * PAGE_BYTES, 13 * PAGE_BYTES))).toThrow(DerivedDamage);
    expect(damaged(() => {})).not.toThrow();
    expect(damaged((b) => (b[3 * PAGE_BYTES + 100]! ^= 1))).toThrow(DerivedDamage);
    expect(damaged((b) => b.fill(0, PAGE_BYTES, 2 * PAGE_BYTES))).toThrow(DerivedDamage);
    expect(damaged(() => {}, 8)).toThrow(DerivedDamage);
    // Two pages swapped: each is checked with its own number.
    expect(
      damaged((b) => {
        const first = Buffer.from(b.subarray(0, PAGE_BYTES));
        b.copy(b, 0, PAGE_BYTES, 2 * PAGE_BYTES);
        first.copy(b, PAGE_BYTES);
      }),
    ).toThrow(DerivedDamage);
  });
});

describe('block log', () => {
  const V3 = (h: { v: number }) => h.v === 3;
  const binding = (size: number) => ({ size, lines: size, seq: size, h: 'h', head_offset: 0, head_length: 0, mtime_ns: '1' });
  /** A log of `blocks` blocks, each continuing the chain the log read so far says it ends at (as a writer does). */
  function logBytes(blocks: number, nonce = 5): Buffer {
    let whole = encodeHeader({ kind: 'crux-index-log', v: 3, nonce });
    for (let b = 0; b < blocks; b++) {
      const entries = new Uint32Array(ENTRY_WORDS * (b + 1)).fill(b + 1);
      const read = parseLog(whole, V3)!;
      whole = Buffer.concat([whole, encodeBlock(nonce, read.end, read.chain, entries, { binding: binding(b + 1), live: b })]);
    }
    return whole;
  }
  /** Where block `b` of a logBytes log starts. */
  const blockAt = (log: Buffer, b: number) => {
    let at = HEADER_BYTES;
    for (let i = 0; i < b; i++) at += 16 + log.readUInt32LE(at + 12) + log.readUInt32LE(at + 8) * ENTRY_WORDS * 4 + 4;
    return at;
  };

  it('reads every verified block and stops at the first that is torn or damaged', () => {
    const whole = logBytes(3);
    const log = parseLog(whole, V3)!;
    expect(log.blocks).toBe(3);
    expect(log.entries.count).toBe(6);
    expect([...log.entries.words.subarray(0, ENTRY_WORDS * 6)]).toEqual([1, 2, 2, 3, 3, 3].flatMap((v) => Array(ENTRY_WORDS).fill(v)));
    expect(log.last?.binding.size).toBe(3);
    expect(log.end).toBe(whole.length);
    // A short write of the last block (a full disk): the first two stand.
    const torn = parseLog(whole.subarray(0, whole.length - 5), V3)!;
    expect(torn.blocks).toBe(2);
    expect(torn.last?.binding.size).toBe(2);
    expect(torn.end).toBe(blockAt(whole, 2));
    // A flipped bit in the second block ends the log after the first, wherever in the block it lies.
    for (const offset of [4, 20, blockAt(whole, 2) - blockAt(whole, 1) - 2]) {
      const flipped = Buffer.from(whole);
      flipped[blockAt(whole, 1) + offset]! ^= 4;
      expect(parseLog(flipped, V3)!.blocks, `offset ${offset}`).toBe(1);
    }
    // In the last block's checksum itself: the two before it stand.
    const lastSum = Buffer.from(whole);
    lastSum[whole.length - 1]! ^= 1;
    expect(parseLog(lastSum, V3)!.blocks).toBe(2);
    // Zeros where blocks were (a page never written back before a power cut).
    const zeroed = Buffer.from(whole);
    zeroed.fill(0, HEADER_BYTES);
    expect(parseLog(zeroed, V3)!.blocks).toBe(0);
    expect(parseLog(whole, (h) => h.v === 2)).toBeUndefined();
  });

  it('continues the chain where the verified blocks end, after a torn tail as after a whole log', () => {
    const whole = logBytes(2);
    const torn = whole.subarray(0, whole.length - 7);
    const read = parseLog(torn, V3)!;
    expect(read.blocks).toBe(1);
    // A writer cuts the torn bytes off and appends there, continuing the chain the reader found.
    const next = encodeBlock(5, read.end, read.chain, new Uint32Array(ENTRY_WORDS).fill(9), { binding: binding(9), live: 9 });
    const appended = Buffer.concat([torn.subarray(0, read.end), next]);
    const again = parseLog(appended, V3)!;
    expect({ blocks: again.blocks, size: again.last?.binding.size, end: again.end }).toEqual({ blocks: 2, size: 9, end: appended.length });
    // An empty log's chain is where a first block starts it.
    expect(parseLog(logBytes(0), V3)!.chain).toBe(chainStart(5));
  });

  it('is appended to only while it is the file that was read: one that replaced it (a reader’s freeze) is left alone', () => {
    const root = join(tempDir(), 'data');
    const one = (nonce: number, size: number) =>
      encodeLog({ nonce }, [{ entries: new Uint32Array(ENTRY_WORDS).fill(nonce), meta: { binding: binding(size), live: 0 } }]);
    expect(writeCacheFile(root, 'x.idx', one(5, 1))).toBe(true);
    const read = readLog(root, 'x.idx', () => true, 1 << 20)!;
    expect({ blocks: read.blocks, size: read.last?.binding.size }).toEqual({ blocks: 1, size: 1 });
    const block = new Uint32Array(ENTRY_WORDS).fill(2);
    appendBlock(root, 'x.idx', read, block, { binding: binding(2), live: 0 });
    expect(readLog(root, 'x.idx', () => true, 1 << 20)!.last?.binding.size).toBe(2);
    // Replaced (temp + rename) since it was read: the append throws, and the new file is as it was written.
    expect(writeCacheFile(root, 'x.idx', one(6, 7))).toBe(true);
    const replaced = fs.readFileSync(cachePath(root, 'x.idx'));
    expect(() => appendBlock(root, 'x.idx', read, block, { binding: binding(3), live: 0 })).toThrow(/replaced/);
    expect(fs.readFileSync(cachePath(root, 'x.idx')).equals(replaced)).toBe(true);
  });

  it('trusts no block moved, dropped, or copied from another log', () => {
    const whole = logBytes(3);
    const [b0, b1, b2] = [blockAt(whole, 0), blockAt(whole, 1), blockAt(whole, 2)];
    const head = whole.subarray(0, HEADER_BYTES);
    // The second block dropped: the third no longer continues the chain.
    expect(parseLog(Buffer.concat([head, whole.subarray(b0, b1), whole.subarray(b2)]), V3)!.blocks).toBe(1);
    // The first two swapped.
    expect(parseLog(Buffer.concat([head, whole.subarray(b1, b2), whole.subarray(b0, b1), whole.subarray(b2)]), V3)!.blocks).toBe(0);
    // Blocks of a log with another nonce under this header.
    const other = logBytes(3, 6);
    expect(parseLog(Buffer.concat([head, other.subarray(HEADER_BYTES)]), V3)!.blocks).toBe(0);
    // Only the middle block from the other log, where this log's lies (its frame, offset and all, is the same).
    expect(parseLog(Buffer.concat([whole.subarray(0, b1), other.subarray(b1, b2), whole.subarray(b2)]), V3)!.blocks).toBe(1);
    // The second block dropped and the third's offset rewritten to match: its checksum still names what it followed.
    const shifted = Buffer.from(whole.subarray(b2));
    shifted.writeUInt32LE(b1, 4);
    expect(parseLog(Buffer.concat([whole.subarray(0, b1), shifted]), V3)!.blocks).toBe(1);
    // A header of this log in front of a copy of its own first block twice.
    expect(parseLog(Buffer.concat([head, whole.subarray(b0, b1), whole.subarray(b0, b1)]), V3)!.blocks).toBe(1);
  });
});

// ---- a keyed toy store with a secondary key, through DataDir ----

type Items = Map<string, { value: number; group: string }>;
const GROUPED: StoreSpec<Items> = {
  file: 'items.jsonl',
  vocabulary: VOCAB,
  initial: () => new Map(),
  evolve(state, record) {
    if (record.ev === 'item.put') state.set(record.data.id, { value: record.data.value, group: record.data.group });
    else if (record.ev === 'item.deleted') state.delete(record.data.id);
  },
  keyOf: (record) => record.data?.id,
  resets: (record) => record.ev === 'item.put',
  secondary: {
    names: ['group', 'value', 'name'],
    version: 1,
    // The item's own key, in order: read by prefix.
    prefixed: ['name'],
    values: (state, key) => {
      const item = state.get(key);
      return [item?.group, item?.value, item === undefined ? undefined : key];
    },
  },
  live: (state) => [...state].map(([id, v]) => ({ ev: 'item.put', data: { id, ...v } })),
};

const put = (id: string, value: number, group: string) => ({ ev: 'item.put', data: { id, value, group } });

function dataDir(root = join(tempDir(), 'data')): { dir: DataDir; warnings: string[] } {
  const warnings: string[] = [];
  return { dir: new DataDir(root, { warn: (m) => warnings.push(m) }, 5_000), warnings };
}

async function seeded(n = 300) {
  const { dir, warnings } = dataDir();
  await dir.write(
    async (tx) =>
      tx.append(
        GROUPED,
        Array.from({ length: n }, (_, i) => put(`k${i}`, i, `g${i % 7}`)),
      ),
    TS,
  );
  // Single-key writes: each appends a block to the log.
  for (let i = 0; i < 20; i++) {
    await dir.write(async (tx) => {
      await tx.loadKey(GROUPED, `k${i}`);
      tx.append(GROUPED, [put(`k${i}`, 1000 + i, 'moved')]);
    }, TS);
  }
  await dir.write(async (tx) => {
    await tx.loadKey(GROUPED, 'k30');
    tx.append(GROUPED, [{ ev: 'item.deleted', data: { id: 'k30' } }]);
  }, TS);
  return { dir, warnings };
}

const replay = (dir: DataDir) => dir.replay(GROUPED, { quiet: true }).state;

/** Every answer the index gives, compared with a replay's. */
async function expectReplayAnswers(dir: DataDir): Promise<void> {
  const truth = replay(dir);
  for (const key of ['k0', 'k5', 'k19', 'k20', 'k30', 'k299', 'nope']) {
    const state = await dir.readKey(GROUPED, key);
    expect(state.get(key)).toEqual(truth.get(key));
  }
  for (const group of ['g3', 'moved', 'none']) {
    const state = await dir.readIndexed(GROUPED, { index: 'group', equals: group });
    const want = [...truth]
      .filter(([, v]) => v.group === group)
      .map(([k]) => k)
      .sort();
    expect(
      [...state]
        .filter(([, v]) => v.group === group)
        .map(([k]) => k)
        .sort(),
    ).toEqual(want);
  }
  // Newest first with a count: the count and the highest values a replay gives, reading only until enough
  // (no count after a replay). Values are ordered from 0 up (another directory's negative values are not).
  const ordered = [...truth.values()].every((v) => v.value >= 0);
  for (const [atMost, k] of [
    [50, 5],
    [499, 12],
    [Number.MAX_SAFE_INTEGER, 3],
  ] as const) {
    if (!ordered) break;
    const matching = [...truth].filter(([, v]) => v.value <= atMost).sort(([ka, a], [kb, b]) => b.value - a.value || (ka < kb ? -1 : 1));
    const top = (m: Iterable<[string, { value: number }]>) =>
      [...m]
        .filter(([, v]) => v.value <= atMost)
        .sort(([ka, a], [kb, b]) => b.value - a.value || (ka < kb ? -1 : 1))
        .slice(0, k)
        .map(([key]) => key);
    const enough = (s: Items) => [...s.values()].filter((v) => v.value <= atMost).length >= k;
    const { state, total } = await dir.readNewest(GROUPED, { index: 'value', atMost }, enough);
    if (total !== undefined) expect(total).toBe(matching.length);
    expect(top(state)).toEqual(top(truth));
    // Not counted: the same highest values, read from the top down (no total).
    const uncounted = await dir.readNewest(GROUPED, { index: 'value', atMost, count: false }, enough);
    expect(uncounted.total).toBeUndefined();
    expect(top(uncounted.state)).toEqual(top(truth));
  }
  // By prefix, in order, read until enough: the first ids a replay gives, whatever is cut.
  const named = (m: Items, prefix: string) => [...m.keys()].filter((k) => k.startsWith(prefix)).sort();
  for (const prefix of ['', 'k', 'k1', 'k19', 'k2999', 'k30', 'zz']) {
    for (const max of [1, 7, 1000]) {
      const state = await dir.readPrefix(GROUPED, { index: 'name', prefix }, (m) => named(m, prefix).length >= max);
      expect(named(state, prefix).slice(0, max), `${prefix} ${max}`).toEqual(named(truth, prefix).slice(0, max));
    }
  }
  // equals on a prefixed name reads the values that share its first bytes: the one asked for among them.
  for (const key of ['k5', 'k30', 'nope']) {
    const state = await dir.readIndexed(GROUPED, { index: 'name', equals: key });
    expect(state.get(key)).toEqual(truth.get(key));
  }
  const low = await dir.readIndexed(GROUPED, { index: 'value', atMost: 50 });
  expect(
    [...low]
      .filter(([, v]) => v.value <= 50)
      .map(([k]) => k)
      .sort(),
  ).toEqual(
    [...truth]
      .filter(([, v]) => v.value <= 50)
      .map(([k]) => k)
      .sort(),
  );
}

describe('a store index through DataDir', () => {
  it('answers by key and by secondary key exactly as a replay does, reading only candidates', async () => {
    const { dir } = await seeded();
    expect(fs.existsSync(cachePath(dir.root, indexName(GROUPED.file)))).toBe(true);
    // The manifest, then the log's blocks, in one file.
    expect(openIndexFile(dir.root, GROUPED)!.log.blocks).toBeGreaterThan(1);
    await expectReplayAnswers(dir);
    const moved = await dir.readIndexed(GROUPED, { index: 'group', equals: 'moved' });
    expect(moved.size).toBe(20);
  });

  it('never changes an answer when its files (manifest, log, each run) are flipped, truncated, zeroed by page, or removed', async () => {
    const { dir } = await seeded();
    const runs = fs.readdirSync(join(dir.root, 'cache')).filter((n) => n.startsWith(`${indexName(GROUPED.file)}.`));
    expect(runs.length).toBeGreaterThan(0);
    const files = [indexName(GROUPED.file), ...runs].map((n) => cachePath(dir.root, n));
    const originals = files.map((f) => fs.readFileSync(f));
    // Back to the files as they were (a reader that bypassed a damaged one wrote a whole new index meanwhile).
    const restore = () => {
      fs.rmSync(join(dir.root, 'cache'), { recursive: true });
      fs.mkdirSync(join(dir.root, 'cache'), { mode: 0o700 });
      for (const [j, f] of files.entries()) fs.writeFileSync(f, originals[j]!);
    };
    const damages: [string, (b: Buffer) => Buffer][] = [
      ['flip in the header', (b) => flip(b, 40)],
      ['flip in the body', (b) => flip(b, Math.floor(b.length * 0.7))],
      ['flip in the last bytes', (b) => flip(b, b.length - 2)],
      ['truncated', (b) => b.subarray(0, Math.floor(b.length / 2))],
      ['zeroed page', (b) => zeroPage(b, 1)],
      ['zeroed first page', (b) => zeroPage(b, 0)],
      ['empty', () => Buffer.alloc(0)],
    ];
    // CI's run (FULL): every damage to every file; `npm test`: every damage to one file at least (the manifest, the
    // log and the runs take turns), and every file removed.
    for (const [i, file] of files.entries()) {
      for (const [, damage] of damages.filter((_, k) => FULL || (k + i) % 3 === 0)) {
        fs.writeFileSync(file, damage(Buffer.from(originals[i]!)));
        await expectReplayAnswers(dir);
        restore();
      }
      fs.rmSync(file);
      await expectReplayAnswers(dir);
      restore();
    }
  });

  it('is not used for another directory’s journal, and a reader rebuilds what it could not use', async () => {
    const a = await seeded(300);
    const { dir: b } = dataDir();
    await b.write(
      async (tx) =>
        tx.append(
          GROUPED,
          Array.from({ length: 300 }, (_, i) => put(`k${i}`, -i, 'other')),
        ),
      TS,
    );
    fs.rmSync(join(b.root, 'cache'), { recursive: true });
    fs.cpSync(join(a.dir.root, 'cache'), join(b.root, 'cache'), { recursive: true });
    await expectReplayAnswers(b);
    // The reader that found the copied index unusable wrote one for this journal.
    const own = fs.readFileSync(cachePath(b.root, indexName(GROUPED.file)));
    expect(own.equals(fs.readFileSync(cachePath(a.dir.root, indexName(GROUPED.file))))).toBe(false);
    expect((await b.readKey(GROUPED, 'k3')).get('k3')).toEqual({ value: -3, group: 'other' });
  });

  it('covers a journal whose last writes never reached the log (a full disk, a crash): the tail is read from the journal', async () => {
    const { dir } = await seeded();
    const log = cachePath(dir.root, indexName(GROUPED.file));
    // Drop the last two blocks, as if their appends had been lost.
    expect(openIndexFile(dir.root, GROUPED)!.log.blocks).toBeGreaterThan(3);
    const bytes = fs.readFileSync(log);
    fs.writeFileSync(log, bytes.subarray(0, bytes.length - 300));
    await expectReplayAnswers(dir);
    // A writer then brings the log up to date again.
    await dir.write(async (tx) => {
      await tx.loadKey(GROUPED, 'k100');
      tx.append(GROUPED, [put('k100', 5, 'moved')]);
    }, TS);
    await expectReplayAnswers(dir);
  });

  it('is bypassed when another program edits the journal without changing its size', async () => {
    const { dir, warnings } = await seeded();
    const path = dir.path(GROUPED.file);
    const text = fs.readFileSync(path, 'utf8');
    fs.writeFileSync(path, text.replace('"value":200,', '"value":201,'));
    const state = await dir.readKey(GROUPED, 'k200');
    expect(state.has('k200')).toBe(false);
    expect(warnings.join('\n')).toMatch(/hash mismatch/);
  });

  it('a base built from a replay holds no withdrawals, which would sort at value 0 and lengthen every "at most" query', async () => {
    const { dir } = dataDir();
    await dir.write(
      async (tx) =>
        tx.append(
          GROUPED,
          Array.from({ length: 400 }, (_, i) => put(`k${i}`, i, `g${i % 3}`)),
        ),
      TS,
    );
    await dir.write(
      async (tx) =>
        tx.append(
          GROUPED,
          Array.from({ length: 350 }, (_, i) => ({ ev: 'item.deleted', data: { id: `k${i}` } })),
        ),
      TS,
    );
    fs.rmSync(join(dir.root, 'cache'), { recursive: true });
    await expectReplayAnswers(dir); // a reader rebuilds the base from its replay
    const manifest = openManifest(dir.root, GROUPED)!;
    expect(manifest.frozen).toEqual([]);
    let withdrawn = 0;
    let secondary = 0;
    for (const ref of manifest.parts) {
      const run = openRun(dir.root, GROUPED.file, ref)!;
      onTestFinished(() => fs.closeSync(run.fd));
      run.table.eachPage((w) => {
        for (let i = 0; i < w.length / ENTRY_WORDS; i++) {
          if (w[i * ENTRY_WORDS]! >>> 24 === 0) continue;
          secondary += 1;
          if (w[i * ENTRY_WORDS + 6]! & 2) withdrawn += 1;
        }
      });
    }
    expect(withdrawn).toBe(0);
    expect(secondary).toBe(3 * 50); // group, value and name of the 50 items left
    // Later writes still withdraw through the log, and every answer stays a replay's.
    await dir.write(async (tx) => tx.append(GROUPED, [{ ev: 'item.deleted', data: { id: 'k399' } }, put('k5', 5, 'g0')]), TS);
    await expectReplayAnswers(dir);
  });

  it('in levels: every step of freezing the log, merging a frozen run partition by partition and splitting answers as a replay does', async () => {
    const { dir } = dataDir();
    process.env.CRUX_TEST_INDEX_LOG_ENTRIES = '8';
    onTestFinished(() => {
      delete process.env.CRUX_TEST_INDEX_LOG_ENTRIES;
    });
    await dir.write(
      async (tx) =>
        tx.append(
          GROUPED,
          Array.from({ length: 120 }, (_, i) => put(`k${i}`, i, `g${i % 7}`)),
        ),
      TS,
    );
    let sawMidMerge = false;
    let most = 0;
    for (let i = 0; i < 60; i++) {
      await dir.write(async (tx) => {
        const key = `k${(i * 37) % 130}`;
        await tx.loadKey(GROUPED, key);
        tx.append(GROUPED, [i % 9 === 8 ? { ev: 'item.deleted', data: { id: key } } : put(key, 500 - i, i % 2 ? 'moved' : `g${i % 5}`)]);
      }, TS);
      const m = openManifest(dir.root, GROUPED)!;
      if (m.frozen.length > 0 && m.frozen[0]!.cursor > 0) sawMidMerge = true;
      most = Math.max(most, m.parts.length);
      await expectReplayAnswers(dir);
    }
    // A big batch (a reap's) goes to a frozen run of its own: no write rewrites every partition.
    await dir.write(async (tx) => {
      await tx.loadKey(GROUPED, ...Array.from({ length: 40 }, (_, i) => `k${i * 3}`));
      tx.append(
        GROUPED,
        Array.from({ length: 40 }, (_, i) => put(`k${i * 3}`, 900 + i, 'big')),
      );
    }, TS);
    await expectReplayAnswers(dir);
    expect(sawMidMerge).toBe(true);
    expect(most).toBeGreaterThan(3);
    // Runs no manifest names are removed: the cache holds the named runs and those the last step retired.
    const m = openManifest(dir.root, GROUPED)!;
    const named = new Set([...m.parts, ...m.frozen].map((r) => r.id).concat(m.retired));
    const runs = fs.readdirSync(join(dir.root, 'cache')).filter((n) => /\.idx\.[0-9a-f]{8}$/.test(n));
    expect(runs.filter((n) => !named.has(n.slice(-8)))).toEqual([]);
    expect(runs.length).toBe(named.size);
  });

  it('reads by prefix in order past the 7 bytes it keeps: ids that tie there are all read before it stops', async () => {
    const { dir } = dataDir();
    // 50 groups of 6 ids that share their first 7 bytes (`s07-lon`).
    const id = (i: number) => `s${String(i % 50).padStart(2, '0')}-long-${'zyxw'[i % 4]}${i}`;
    await dir.write(
      async (tx) =>
        tx.append(
          GROUPED,
          Array.from({ length: 300 }, (_, i) => put(id((i * 7) % 300), i, 'g')),
        ),
      TS,
    );
    // Some more in the log, some deleted.
    for (let i = 0; i < 6; i++) {
      await dir.write(async (tx) => {
        await tx.loadKey(GROUPED, id(i * 11));
        tx.append(GROUPED, [i % 2 ? { ev: 'item.deleted', data: { id: id(i * 11) } } : put(`${id(i * 11)}b`, 1, 'h')]);
      }, TS);
    }
    const truth = replay(dir);
    const named = (m: Items, prefix: string) => [...m.keys()].filter((k) => k.startsWith(prefix)).sort();
    for (const prefix of ['', 's', 's0', 's07', 's07-long-y', 's49-long-', 's50']) {
      for (const max of [1, 3, 14, 20]) {
        const state = await dir.readPrefix(GROUPED, { index: 'name', prefix }, (m) => named(m, prefix).length >= max);
        expect(named(state, prefix).slice(0, max), `${prefix} ${max}`).toEqual(named(truth, prefix).slice(0, max));
        // It stops early: not every item is read.
        if (prefix.length < 3) expect(state.size).toBeLessThan(truth.size / 2);
      }
    }
  });

  it('merges its log into a new base past LOG_MAX_ENTRIES, keeping each entity’s latest secondary keys only', async () => {
    const { dir } = dataDir();
    process.env.CRUX_TEST_INDEX_LOG_ENTRIES = '20';
    onTestFinished(() => {
      delete process.env.CRUX_TEST_INDEX_LOG_ENTRIES;
    });
    await seedGroup(dir, 50);
    // Enough single writes to pass the log bound (each adds 3 entries).
    for (let i = 0; i < 40; i++) await moveOne(dir, `k${i % 5}`, 100 + i, i % 2 ? 'b' : 'c');
    await expectReplayAnswers(dir);
    const b = await dir.readIndexed(GROUPED, { index: 'group', equals: 'b' });
    expect([...b].filter(([, v]) => v.group === 'b').length).toBe([...replay(dir)].filter(([, v]) => v.group === 'b').length);
  });
});

/** `n` items k0… in group a, in one write. */
async function seedGroup(dir: DataDir, n: number): Promise<void> {
  await dir.write(
    async (tx) =>
      tx.append(
        GROUPED,
        Array.from({ length: n }, (_, i) => put(`k${i}`, i, 'a')),
      ),
    TS,
  );
}

/** One write that gives `key` a new value and group, as a command on one entity does (its key loaded first). */
async function moveOne(dir: DataDir, key: string, value: number, group: string): Promise<void> {
  await dir.write(async (tx) => {
    await tx.loadKey(GROUPED, key);
    tx.append(GROUPED, [put(key, value, group)]);
  }, TS);
}

describe('the index log over a small base', () => {
  it('is frozen into a run once it holds 192 entries, however many writes come (each reads it all)', async () => {
    const { dir } = dataDir();
    await seedGroup(dir, 20);
    const counts: number[] = [];
    for (let i = 0; i < 100; i++) {
      await moveOne(dir, `k${i % 20}`, 100 + i, i % 2 ? 'b' : 'c');
      counts.push(openIndexFile(dir.root, GROUPED)?.log.entries.count ?? 0);
    }
    // 192 entries (~8.5 KiB of a session store's log): a get checksums its log within the bytes it checksums before
    // it loads node:zlib (derived/checksum.ts).
    expect(Math.max(...counts)).toBeLessThanOrEqual(192);
    expect(Math.max(...counts)).toBeGreaterThan(185);
    // It was frozen, and went on growing from nothing.
    expect(counts.findIndex((c, i) => i > 0 && c < counts[i - 1]!)).toBeGreaterThan(0);
    await expectReplayAnswers(dir);
  });
});

function flip(b: Buffer, at: number): Buffer {
  if (b.length === 0) return b;
  b[at % b.length]! ^= 0x08;
  return b;
}

function zeroPage(b: Buffer, page: number): Buffer {
  b.fill(0, page * 4096, Math.min(b.length, (page + 1) * 4096));
  return b;
}
