// The case bank as bytes, for a replay cache: a JSON header line, then each section 8-byte aligned —
// the joined case ids, the joined vocabulary, and the numeric columns as raw little-endian typed arrays.
// Loading it is a few views and two string decodes, not a replay. Text fields are not included: they stay
// in the journal, at the positions the bank records. The one encoder is steps.ts's (encodeBank: all in one step).
import type { SnapshotBody } from '../../codec/store-spec';
import type { Bank } from './bank';
import type { BankColumns, LazyColumns } from './layout';
import type { Numbers } from './columns';
import type { TagTally } from './layout';

const MAGIC = 'crux-case-bank';
// The vocabulary holds tokenize()'s terms: v2 since words are Alphabetic runs (SPEC §5), not \p{L} runs;
// v3 adds the sorted (id hash, slot) pairs, v4 each posting's ranking facts (postMeta), v5 the tags' marks
// (layout.ts tagMark) in the postings, v6 the slots in created order (byCreated: key-order.ts), v7 in reward and
// in reused order too (byReward, byReused).
const VERSION = 7;

type Numeric = Float64Array | Uint32Array | Uint16Array | Uint8Array;
type Ctor = { new (buffer: ArrayBuffer, byteOffset: number, length: number): Numeric; BYTES_PER_ELEMENT: number };
export const NUMERIC: readonly [keyof BankColumns, Ctor][] = [
  ['idStarts', Uint32Array],
  ['reward', Float64Array],
  ['created', Float64Array],
  ['success', Uint8Array],
  ['reused', Float64Array],
  ['termCount', Uint32Array],
  ['recOffset', Float64Array],
  ['recLength', Uint32Array],
  ['recLine', Uint32Array],
  ['postStart', Uint32Array],
  ['postSlots', Uint32Array],
  ['idHash', Uint32Array],
  ['postMeta', Uint16Array],
  ['byCreated', Uint32Array],
  ['byReward', Uint32Array],
  ['byReused', Uint32Array],
];

interface Header {
  magic: string;
  v: number;
  liveRecordBytes: number;
  /** Byte lengths: ids, vocab, then each numeric column in NUMERIC order. */
  sections: number[];
  /** Success by tag over the slots (tag-tally.ts); absent in a snapshot of an older crux. */
  tags?: number[];
  untagged?: [number, number];
  /** 1 when created never decreases over the slots (key-order.ts), else 0; one length either way. */
  ordered?: number;
}

export const pad8 = (n: number) => (n + 7) & ~7;

/** The body's first line: what decodeBank reads first (the sections' byte lengths: ids, vocab, then NUMERIC's). */
export function bankHead(liveRecordBytes: number, sections: readonly number[], tally: TagTally, ordered: boolean): Buffer {
  const header: Header = {
    magic: MAGIC,
    v: VERSION,
    liveRecordBytes,
    sections: [...sections],
    tags: [...tally.marks],
    untagged: [...tally.untagged],
    ordered: ordered ? 1 : 0,
  };
  return Buffer.from(`${JSON.stringify(header)}\n`);
}

/** The byte lengths of the sections after the head (ids, vocab, then NUMERIC's) of a bank of these counts. */
export const sectionLengths = (idBytes: number, vocabBytes: number, slots: number, terms: number, postings: number): number[] => [
  idBytes,
  vocabBytes,
  ...NUMERIC.map(
    ([name, ctor]) =>
      ctor.BYTES_PER_ELEMENT *
      (name === 'postStart' ? terms + 1 : name === 'postSlots' || name === 'postMeta' ? postings : name === 'idHash' ? 2 * slots : slots),
  ),
];

const PAGE = 4096;
/**
 * A column read page by page; once a query has touched this share of its pages (and at least 16), it is read
 * whole (a query touching most of it). Proportional, so that a query's scattered reads do not turn into a
 * read of the whole column as the bank grows.
 */
const WHOLE_AFTER_SHARE = 1 / 8;
const WHOLE_AFTER_PAGES = 16;

/** Numbers of a column at `start` in the body, read on demand. */
function lazyNumbers(body: SnapshotBody, start: number, length: number, ctor: Ctor): Numbers & { slice(from: number, to: number): Numeric } {
  const size = ctor.BYTES_PER_ELEMENT;
  const pages = new Map<number, Buffer>();
  const wholeAfter = Math.max(WHOLE_AFTER_PAGES, Math.ceil(((length * size) / PAGE) * WHOLE_AFTER_SHARE));
  let whole: Numeric | undefined;
  const read = (buf: Buffer, at: number) =>
    size === 8 ? buf.readDoubleLE(at) : size === 4 ? buf.readUInt32LE(at) : size === 2 ? buf.readUInt16LE(at) : buf[at]!;
  return {
    length,
    get(i: number): number {
      if (whole !== undefined) return whole[i]!;
      if (!(i >= 0 && i < length)) return undefined as unknown as number;
      const at = start + i * size;
      const p = Math.floor(at / PAGE);
      let page = pages.get(p);
      if (page === undefined) {
        if (pages.size >= wholeAfter) {
          whole = typed(body.read(start, length * size), ctor, length);
          return whole[i]!;
        }
        page = body.read(p * PAGE, Math.min(PAGE, body.length - p * PAGE));
        pages.set(p, page);
      }
      return read(page, at - p * PAGE);
    },
    slice(from: number, to: number): Numeric {
      if (whole !== undefined) return whole.subarray(from, to);
      return typed(body.read(start + from * size, (to - from) * size), ctor, to - from);
    },
  };
}

/** Bytes as a typed array: a view when they are aligned for it, else an aligned copy. */
function typed(bytes: Buffer, ctor: Ctor, length: number): Numeric {
  if (bytes.byteOffset % ctor.BYTES_PER_ELEMENT === 0) return new ctor(bytes.buffer as ArrayBuffer, bytes.byteOffset, length);
  const own = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(own);
  return new ctor(own.buffer as ArrayBuffer, 0, length);
}

/**
 * The bank encoded in `body`, or undefined when it is not a consistent bank of this version. Its header,
 * vocabulary and postings index are read now; every other section on demand (a retrieve reads the postings
 * of its terms and its candidates' numbers), made a bank by `make` (which checks them: a RangeError refuses them).
 * A later read may throw DerivedDamage (see SnapshotBody).
 */
export function decodeBank<B extends Bank>(body: SnapshotBody, make: (columns: LazyColumns) => B): B | undefined {
  // The head holds a number pair per tag: read further while it has not ended.
  let head = body.read(0, Math.min(4096, body.length));
  let nl = head.indexOf(10);
  while (nl === -1 && head.length < body.length) {
    head = body.read(0, Math.min(2 * head.length, body.length));
    nl = head.indexOf(10);
  }
  if (nl === -1) return undefined;
  let header: Header;
  try {
    header = JSON.parse(head.toString('utf8', 0, nl));
  } catch {
    return undefined;
  }
  if (
    header?.magic !== MAGIC ||
    header.v !== VERSION ||
    !Array.isArray(header.sections) ||
    header.sections.length !== NUMERIC.length + 2 ||
    typeof header.liveRecordBytes !== 'number'
  ) {
    return undefined;
  }
  let at = pad8(nl + 1);
  const take = (length: number) => {
    if (!Number.isSafeInteger(length) || length < 0 || at + length > body.length) throw new RangeError('truncated');
    const start = at;
    at = pad8(at + length);
    return start;
  };
  try {
    const [idLength, vocabLength, ...numeric] = header.sections as number[];
    const idStart = take(idLength!);
    const idBytes = { length: idLength!, slice: (from: number, to: number) => body.read(idStart + from, to - from) };
    const vocabStart = take(vocabLength!);
    const vocabText = body.read(vocabStart, vocabLength!).toString('utf8');
    const tagCounts = header.tags === undefined && header.untagged === undefined ? undefined : { marks: header.tags, untagged: header.untagged };
    const columns: Record<string, unknown> = {
      idBytes,
      vocab: vocabLength === 0 ? [] : vocabText.split('\n'),
      liveRecordBytes: header.liveRecordBytes,
      tagCounts,
      createdOrdered: header.ordered === undefined ? undefined : header.ordered === 1,
    };
    NUMERIC.forEach(([name, ctor], i) => {
      const length = numeric[i]!;
      if (length % ctor.BYTES_PER_ELEMENT !== 0) throw new RangeError('misaligned');
      const start = take(length);
      const count = length / ctor.BYTES_PER_ELEMENT;
      // The postings index is vocabulary-sized and read by every query: read it now.
      columns[name as string] = name === 'postStart' ? typed(body.read(start, length), ctor, count) : lazyNumbers(body, start, count, ctor);
    });
    return make(columns as unknown as LazyColumns);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}
