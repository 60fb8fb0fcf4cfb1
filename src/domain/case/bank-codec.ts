// The case bank as bytes, for a replay cache: a JSON header line, then each section 8-byte aligned —
// the joined case ids, the joined vocabulary, and the numeric columns as raw little-endian typed arrays.
// Loading it is a few views and two string decodes, not a replay. Text fields are not included: they stay
// in the journal, at the positions the bank records.
import { CaseBank, type BankColumns } from './bank';

const MAGIC = 'crux-case-bank';
// The vocabulary holds tokenize()'s terms: v2 since words are Alphabetic runs (SPEC §5), not \p{L} runs;
// v3 adds the sorted (id hash, slot) pairs.
const VERSION = 3;

type Numeric = Float64Array | Uint32Array | Uint8Array;
type Ctor = { new (buffer: ArrayBuffer, byteOffset: number, length: number): Numeric; BYTES_PER_ELEMENT: number };
const NUMERIC: readonly [keyof BankColumns, Ctor][] = [
  ['idStarts', Uint32Array], ['reward', Float64Array], ['created', Float64Array], ['success', Uint8Array],
  ['reused', Float64Array], ['termCount', Uint32Array], ['recOffset', Float64Array], ['recLength', Uint32Array],
  ['recLine', Uint32Array], ['postStart', Uint32Array], ['postSlots', Uint32Array], ['idHash', Uint32Array],
];

interface Header {
  magic: string;
  v: number;
  liveRecordBytes: number;
  /** Byte lengths: ids, vocab, then each numeric column in NUMERIC order. */
  sections: number[];
}

const pad8 = (n: number) => (n + 7) & ~7;

export function encodeBank(bank: CaseBank): Buffer {
  const columns = bank.toColumns();
  const sections: Uint8Array[] = [
    columns.idBytes,
    Buffer.from(columns.vocab.join('\n')),
    ...NUMERIC.map(([name]) => {
      const column = columns[name] as Numeric;
      return new Uint8Array(column.buffer, column.byteOffset, column.byteLength);
    }),
  ];
  const header: Header = { magic: MAGIC, v: VERSION, liveRecordBytes: columns.liveRecordBytes, sections: sections.map((s) => s.byteLength) };
  const head = Buffer.from(`${JSON.stringify(header)}\n`);
  let size = pad8(head.length);
  for (const section of sections) size += pad8(section.byteLength);
  const out = Buffer.alloc(size);
  head.copy(out, 0);
  let at = pad8(head.length);
  for (const section of sections) {
    out.set(section, at);
    at += pad8(section.byteLength);
  }
  return out;
}

/** The bank encoded in `bytes`, or undefined when they are not a consistent bank of this version. */
export function decodeBank(bytes: Buffer): CaseBank | undefined {
  const nl = bytes.indexOf(10);
  if (nl === -1 || nl > 4096) return undefined;
  let header: Header;
  try {
    header = JSON.parse(bytes.toString('utf8', 0, nl));
  } catch {
    return undefined;
  }
  if (
    header?.magic !== MAGIC || header.v !== VERSION || !Array.isArray(header.sections) || header.sections.length !== NUMERIC.length + 2 || typeof header.liveRecordBytes !== 'number') {
    return undefined;
  }
  // Typed views need 8-byte alignment in their ArrayBuffer; a pooled Buffer may not give it.
  let aligned = bytes;
  if (bytes.byteOffset % 8 !== 0) {
    aligned = Buffer.allocUnsafeSlow(bytes.length); // its own ArrayBuffer, at offset 0
    bytes.copy(aligned);
  }
  let at = pad8(nl + 1);
  const take = (length: number) => {
    if (!Number.isSafeInteger(length) || length < 0 || at + length > aligned.length) throw new RangeError('truncated');
    const start = at;
    at = pad8(at + length);
    return start;
  };
  try {
    const [idLength, vocabLength, ...numeric] = header.sections as number[];
    const idStart = take(idLength!);
    const idBytes = aligned.subarray(idStart, idStart + idLength!);
    const vocabStart = take(vocabLength!);
    const vocabText = aligned.toString('utf8', vocabStart, vocabStart + vocabLength!);
    const columns: Record<string, unknown> = { idBytes, vocab: vocabLength === 0 ? [] : vocabText.split('\n'), liveRecordBytes: header.liveRecordBytes };
    NUMERIC.forEach(([name, ctor], i) => {
      const length = numeric[i]!;
      if (length % ctor.BYTES_PER_ELEMENT !== 0) throw new RangeError('misaligned');
      columns[name] = new ctor(aligned.buffer as ArrayBuffer, aligned.byteOffset + take(length), length / ctor.BYTES_PER_ELEMENT);
    });
    return new CaseBank(columns as unknown as BankColumns);
  } catch {
    return undefined;
  }
}
