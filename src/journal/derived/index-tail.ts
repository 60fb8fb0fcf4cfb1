// What an index does not cover yet: the journal's records past its binding (a write whose log block was lost,
// an index older than its journal), read and verified as a replay reads them; and a loaded position's binding.
import type { ChainHead } from '../codec/record';
import { isDamaged, scanJournal, type LinePosition, type TornTail } from '../codec/scan';
import type { Position } from '../codec/loaded';
import type { StoreSpec } from '../codec/store-spec';
import type { JournalBinding } from './cache-file';
import { EntryList } from './entries';
import { keyEntry } from './index-entries';

export interface Tail {
  readonly entries: EntryList;
  readonly keys: Set<string>;
  readonly head: ChainHead;
  readonly headAt: LinePosition | undefined;
  readonly lines: number;
  readonly bytes: number;
  readonly tornTail: TornTail | undefined;
}

/** The binding of a loaded position: the journal up to its last whole line. */
export function bindingAt(end: Position, mtime_ns: string): JournalBinding {
  return {
    mtime_ns,
    size: end.tornTail?.offset ?? end.bytes,
    lines: end.tornTail ? end.tornTail.line - 1 : end.lines,
    seq: end.head.seq,
    h: end.head.seq === 0 ? '' : end.head.h,
    head_offset: end.headAt?.offset ?? 0,
    head_length: end.headAt?.length ?? 0,
  };
}

/** The journal's records past `covered`, verified; undefined when any of them does not verify. */
export function readTail(spec: StoreSpec<any>, fd: number, size: number, covered: JournalBinding): Tail | undefined {
  const entries = new EntryList(16);
  const keys = new Set<string>();
  const head = { seq: covered.seq, h: covered.h };
  const atHead = covered.seq === 0 ? undefined : { line: covered.lines, offset: covered.head_offset, length: covered.head_length };
  if (size === covered.size) return { entries, keys, head, headAt: atHead, lines: covered.lines, bytes: size, tornTail: undefined };
  const scan = scanJournal(
    fd,
    spec.vocabulary,
    (record, at) => {
      const key = keyEntry(entries, spec, record, at);
      if (key !== undefined) keys.add(key);
    },
    covered.seq === 0 ? undefined : { offset: covered.size, line: covered.lines, head },
  );
  if (isDamaged(scan)) return undefined;
  return { entries, keys, head: scan.head, headAt: scan.headAt ?? atHead, lines: scan.lines, bytes: scan.bytes, tornTail: scan.tornTail };
}
