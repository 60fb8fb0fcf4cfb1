// Damaged journals, as properties (fast-check, no processes): random truncations, byte flips, inserted garbage,
// deleted and duplicated lines, invalid UTF-8, NUL runs, raw U+2028. Replay never throws, every damage is
// reported at its exact line, and `check --repair` makes the journal healthy without losing a good record.
import * as fs from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DataDir } from '../../src/journal/dir/data-dir';
import { EMPTY_HEAD, encodeRecords, type EventDraft } from '../../src/journal/codec/record';
import { scanJournal } from '../../src/journal/codec/scan';
import { ITEM_STORE, VOCAB } from '../unit/journal/fixtures';
import { tempDir } from '../helpers/cli';
import { figure, scaled, TIMEOUT } from './harness';

const RUNS = scaled(40, 2000);
const TS = '2026-11-29T21:00:00.000Z';

/** Values that stress the line codec: raw U+2028/U+2029/U+0085, control characters, astral characters. */
const value = fc.oneof(
  fc.integer(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('\u2028', 'a\u2029b', '\u0085', '\r\n', '\t\u0000', '😀', '\\u2028', '"}\n{"'),
);
const journal = fc.array(value, { minLength: 1, maxLength: 20 }).map((values) => {
  const drafts: EventDraft[] = values.map((v, i) => ({ ev: 'item.put', data: { id: `k${i + 1}`, value: v } }));
  const text = Buffer.from(encodeRecords(EMPTY_HEAD, drafts, TS).text);
  const lines: Buffer[] = [];
  for (let start = 0; start < text.length; ) {
    const nl = text.indexOf(10, start);
    lines.push(text.subarray(start, nl));
    start = nl + 1;
  }
  return { values, text, lines };
});
type Journal = { values: unknown[]; text: Buffer; lines: Buffer[] };

/**
 * A damaged file and what a correct reader must say about it: `lines` = the 1-based lines that must be
 * reported (exactly); `followOn` = lines that may additionally carry a chain/sequence finding; `survivors` =
 * the original records (0-based) whose data must load, before and after repair.
 */
interface Damage {
  kind: string;
  bytes: Buffer;
  lines: number[];
  followOn?: number[];
  survivors: number[];
}

const all = (j: Journal) => j.lines.map((_, i) => i);
const join_ = (lines: Buffer[], tail = true) => Buffer.concat(lines.flatMap((l, i) => (i < lines.length - 1 || tail ? [l, Buffer.from('\n')] : [l])));
const without = (j: Journal, ...gone: number[]) => all(j).filter((i) => !gone.includes(i));

/** Replace line i's bytes and expect exactly that line reported, the rest loaded. */
function inLine(j: Journal, kind: string, i: number, line: Buffer, followOn = false): Damage {
  const lines = [...j.lines];
  lines[i] = line;
  return { kind, bytes: join_(lines), lines: [i + 1], ...(followOn && i + 2 <= j.lines.length ? { followOn: [i + 2] } : {}), survivors: without(j, i) };
}

const truncate = (j: Journal) =>
  fc.integer({ min: 0, max: j.text.length - 1 }).map((k): Damage => {
    const bytes = j.text.subarray(0, k);
    const complete = bytes.filter((b) => b === 10).length;
    const atBoundary = k === 0 || bytes[k - 1] === 10;
    return { kind: 'truncate', bytes, lines: atBoundary ? [] : [complete + 1], survivors: all(j).slice(0, complete) };
  });

const flip = (j: Journal) =>
  fc.record({ i: fc.nat(j.lines.length - 1), at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }).map(({ i, at, mask }): Damage => {
    const line = Buffer.from(j.lines[i]!);
    const p = at % line.length;
    line[p] = line[p]! ^ mask;
    if (line[p] === 10) line[p] = 0x21; // a flip into \n would split the line: that is the garbage case
    // A flip in the claimed seq or hash leaves the next line pointing at the true one: a chain finding there too.
    const text = j.lines[i]!.toString('latin1');
    const seqEnd = text.indexOf(',"ts"');
    const inSeqOrHash = (p >= 7 && p < seqEnd) || p >= line.length - 35;
    return inLine(j, 'flip', i, line, inSeqOrHash);
  });

const garbage = (j: Journal) =>
  fc.record({ at: fc.nat(j.lines.length), bytes: fc.uint8Array({ maxLength: 60 }) }).map(({ at, bytes }): Damage => {
    const junk = Buffer.from(bytes.filter((b) => b !== 10));
    const lines = [...j.lines];
    lines.splice(at, 0, junk);
    return { kind: 'garbage', bytes: join_(lines), lines: [at + 1], survivors: all(j) };
  });

const duplicate = (j: Journal) =>
  fc.nat(j.lines.length - 1).map((i): Damage => {
    const lines = [...j.lines];
    lines.splice(i + 1, 0, j.lines[i]!);
    return { kind: 'duplicate', bytes: join_(lines), lines: [i + 2], survivors: all(j) };
  });

// Deleting the last line is undetectable by design (a shorter journal): any line but the last.
const deleteLine = (j: Journal) =>
  j.lines.length < 2
    ? duplicate(j)
    : fc.nat(j.lines.length - 2).map((i): Damage => {
        const lines = [...j.lines];
        lines.splice(i, 1);
        // The line after the gap is where the chain and the sequence break.
        return { kind: 'delete', bytes: join_(lines), lines: [i + 1], survivors: without(j, i) };
      });

const INVALID_UTF8 = [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80]];
const invalidUtf8 = (j: Journal) =>
  fc.record({ i: fc.nat(j.lines.length - 1), at: fc.nat(), seq: fc.constantFrom(...INVALID_UTF8) }).map(({ i, at, seq }) => {
    const line = j.lines[i]!;
    const p = at % (line.length + 1);
    return inLine(j, 'invalid-utf8', i, Buffer.concat([line.subarray(0, p), Buffer.from(seq), line.subarray(p)]));
  });

const nulRun = (j: Journal) =>
  fc.record({ i: fc.nat(j.lines.length - 1), at: fc.nat(), len: fc.integer({ min: 1, max: 600 }) }).map(({ i, at, len }) => {
    const line = Buffer.from(j.lines[i]!);
    const p = at % line.length;
    line.fill(0, p, Math.min(line.length, p + len));
    return inLine(j, 'nul-run', i, line);
  });

/** A zeroed block at the end, as a crash on some filesystems leaves it (etcd's torn-write test). */
const nulTail = (j: Journal) =>
  fc.integer({ min: 1, max: 4096 }).map(
    (len): Damage => ({
      kind: 'nul-tail',
      bytes: Buffer.concat([j.text, Buffer.alloc(len)]),
      lines: [j.lines.length + 1],
      survivors: all(j),
    }),
  );

const rawU2028 = (j: Journal) =>
  fc.record({ i: fc.nat(j.lines.length - 1), at: fc.nat() }).map(({ i, at }) => {
    const line = j.lines[i]!;
    const p = at % (line.length + 1);
    // Only at a character boundary, so the line stays valid UTF-8: the damage is the extra character itself.
    let q = p;
    while (q > 0 && q < line.length && (line[q]! & 0xc0) === 0x80) q -= 1;
    return inLine(j, 'raw-u2028', i, Buffer.concat([line.subarray(0, q), Buffer.from('\u2028'), line.subarray(q)]));
  });

const damaged = journal.chain((j) =>
  fc.oneof(truncate(j), flip(j), garbage(j), deleteLine(j), duplicate(j), invalidUtf8(j), nulRun(j), nulTail(j), rawU2028(j)).map((d) => ({ j, d })),
);

const expectedState = (j: Journal, survivors: number[]) => new Map(survivors.map((i) => [`k${i + 1}`, j.values[i]]));

function write(bytes: Buffer): { dir: string; path: string } {
  const dir = tempDir('crux-damage-');
  const path = join(dir, ITEM_STORE.file);
  fs.writeFileSync(path, bytes, { mode: 0o600 });
  return { dir, path };
}

describe('damaged journals (property tests)', { timeout: TIMEOUT }, () => {
  it('a healthy journal with raw U+2028, U+2029, U+0085, NUL and astral characters in its records replays clean', () => {
    fc.assert(
      fc.property(journal, (j) => {
        const { dir, path } = write(j.text);
        const state = ITEM_STORE.initial();
        const scan = scanJournal(path, VOCAB, (r, at) => ITEM_STORE.evolve(state, r, at));
        fs.rmSync(dir, { recursive: true, force: true });
        expect(scan.problems).toEqual([]);
        expect(state).toEqual(expectedState(j, all(j)));
      }),
      { numRuns: RUNS },
    );
  });

  it('replay never throws, reports every damage at its exact line, and loads every good record', () => {
    const kinds = new Map<string, number>();
    fc.assert(
      fc.property(damaged, ({ j, d }) => {
        kinds.set(d.kind, (kinds.get(d.kind) ?? 0) + 1);
        const { dir, path } = write(d.bytes);
        const state = ITEM_STORE.initial();
        const scan = scanJournal(path, VOCAB, (r, at) => ITEM_STORE.evolve(state, r, at));
        fs.rmSync(dir, { recursive: true, force: true });
        const reported = [...new Set(scan.problems.map((p) => p.line))];
        const extra = reported.filter((l) => !d.lines.includes(l));
        expect(
          d.lines.filter((l) => !reported.includes(l)),
          `${d.kind}: not reported`,
        ).toEqual([]);
        expect(
          extra.filter((l) => !d.followOn?.includes(l)),
          `${d.kind}: reported at the wrong line`,
        ).toEqual([]);
        for (const p of scan.problems.filter((p) => extra.includes(p.line))) expect(p.reason).toMatch(/chain break|sequence gap/);
        for (const p of scan.problems.filter((p) => p.reason === 'hash mismatch'))
          expect(d.bytes.subarray(p.offset, p.offset + p.length).toString('utf8')).not.toContain('\ufffd');
        expect(state).toEqual(expectedState(j, d.survivors));
      }),
      { numRuns: RUNS * 3 },
    );
    expect(kinds.size).toBe(9);
    figure('damage-property-cases', Object.fromEntries(kinds));
  });

  it('check --repair makes any damaged journal healthy, keeps every good record, and quarantines the original bytes', async () => {
    await fc.assert(
      fc.asyncProperty(damaged, async ({ j, d }) => {
        const { dir } = write(d.bytes);
        const data = new DataDir(dir, { warn: () => {} }, 5_000);
        const [first] = await data.check([ITEM_STORE], { repair: true, ts: TS });
        expect(first!.problems.length > 0).toBe(d.lines.length > 0);
        const [second] = await data.check([ITEM_STORE], { repair: false, ts: TS });
        expect(second!.problems, d.kind).toEqual([]);
        expect(await data.read(ITEM_STORE)).toEqual(expectedState(j, d.survivors));
        if (d.lines.length > 0) {
          // Nothing is deleted: the whole damaged file is in quarantine, byte for byte, private.
          const names = fs.readdirSync(join(dir, 'quarantine'));
          const copy = names.find((n) => n.endsWith('.before-repair'));
          expect(fs.readFileSync(join(dir, 'quarantine', copy!)).equals(d.bytes)).toBe(true);
          for (const n of names) expect(fs.statSync(join(dir, 'quarantine', n)).mode & 0o777).toBe(0o600);
          expect(fs.statSync(join(dir, 'quarantine')).mode & 0o777).toBe(0o700);
        }
        fs.rmSync(dir, { recursive: true, force: true });
      }),
      { numRuns: RUNS },
    );
  });

  it('every truncation point of one journal: the records wholly before the cut load, and repair leaves exactly that prefix', async () => {
    const drafts: EventDraft[] = Array.from({ length: 12 }, (_, i) => ({ ev: 'item.put', data: { id: `k${i + 1}`, value: i % 3 ? 'x\u2028y' : i } }));
    const text = Buffer.from(encodeRecords(EMPTY_HEAD, drafts, TS).text);
    const step = scaled(7, 1);
    let cuts = 0;
    for (let k = 0; k < text.length; k += step) {
      const bytes = text.subarray(0, k);
      const complete = bytes.lastIndexOf(10) + 1;
      const { dir, path } = write(bytes);
      const data = new DataDir(dir, { warn: () => {} }, 5_000);
      await data.check([ITEM_STORE], { repair: true, ts: TS });
      expect(fs.readFileSync(path).equals(text.subarray(0, complete)), `cut at ${k}`).toBe(true);
      fs.rmSync(dir, { recursive: true, force: true });
      cuts += 1;
    }
    figure('truncation-points', { bytes: text.length, cuts, prefix_exact: cuts });
  });
});
