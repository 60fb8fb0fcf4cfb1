// The entities a streamed index rebuild (rebuild.ts) folds again in its merge: those whose lines since their last
// resetting one span windows (a session closed long after its last put), so that no window held them whole. They
// come in key order, their lines anywhere in the journal; a read of each line cost ~24 µs here (a pread ~10 µs),
// which a store whose sessions were mostly closed by a reap paid for most of its sessions. So they are gathered a
// batch at a time (up to 8 MiB of their lines, held as text, never as states), their lines read in journal
// order with lines near each other taken in one read (a span of at most 256 KiB, gaps of at most 16 KiB), then
// each entity decoded and folded from its own lines, in order, and its secondary entries added as valid candidates.
import { fs } from '../../shared/fs';
import { decodeRecord, type JournalRecord, TRUST_VOUCHED } from '../codec/record';
import type { LinePosition } from '../codec/scan';
import type { StoreSpec } from '../codec/store-spec';
import { readVerified } from './cache-file';
import { ENTRY_WORDS, EntryList, FLAG_RESET, joinOffset, secondaryEntries } from './entries';
import type { SpillSort } from './spill';
import { testHook } from '../../shared/test-hooks';

/** Line bytes a batch holds before it is folded; CRUX_TEST_REBUILD_ENTRIES lowers it, so that tests fold in batches. */
const batchBytes = () => (Number(testHook('CRUX_TEST_REBUILD_ENTRIES')) || 0) * 16 || 8 * 1024 * 1024;
const SPAN_BYTES = 256 * 1024;
const GAP_BYTES = 16 * 1024;

/** An entity to fold again: its subgroup's lines (all of them, in journal order) in the batch's `lines`, the first to read. */
interface Entity {
  readonly at: number;
  readonly count: number;
  readonly from: number;
  /** Where its lines from `from` on sit among the lines read. */
  readonly first: number;
}

/** A candidate that is valid whatever the markers say: an entity folded again by the merge. */
export const REFOLDED = 0xffffffff;

export class Refolds<S> {
  private entities: Entity[] = [];
  /** Every entity's subgroup lines (key line entries), one after another. */
  private readonly lines = new EntryList(1024);
  /** Every line to read: its offset, length, and (once read) its text. */
  private offsets: number[] = [];
  private lengths: number[] = [];
  private texts: (string | undefined)[] = [];
  private held = 0;
  private readonly span = Buffer.allocUnsafeSlow(SPAN_BYTES);

  constructor(
    private readonly spec: StoreSpec<S>,
    private readonly fd: number,
    private readonly out: SpillSort,
  ) {}

  /**
   * The entity of subgroup `at` of `group`, to be folded from its lines since its last resetting one; false when a
   * batch it completed could not be folded (a line does not read back as the scan verified it).
   */
  add(group: EntryList, at: readonly number[]): boolean {
    let from = 0;
    for (let k = at.length - 1; k >= 0; k--) {
      if (group.words[at[k]! * ENTRY_WORDS + 6]! & FLAG_RESET) {
        from = k;
        break;
      }
    }
    this.entities.push({ at: this.lines.count, count: at.length, from, first: this.offsets.length });
    for (const j of at) this.lines.pushFrom(group.words, j);
    for (let k = from; k < at.length; k++) {
      const x = at[k]! * ENTRY_WORDS;
      const length = group.words[x + 4]!;
      this.offsets.push(joinOffset(group.words[x + 2]!, group.words[x + 3]!));
      this.lengths.push(length);
      this.held += length;
    }
    return this.held < batchBytes() || this.flush();
  }

  /** Reads and folds the batch; false when a line does not read back as the scan verified it. */
  flush(): boolean {
    try {
      return this.read() && this.entities.every((entity) => this.fold(entity));
    } finally {
      this.entities = [];
      this.lines.count = 0;
      this.offsets = [];
      this.lengths = [];
      this.texts = [];
      this.held = 0;
    }
  }

  /** Every line of the batch, in journal order, nearby lines in one read; each line decoded to text from the read. */
  private read(): boolean {
    const n = this.offsets.length;
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => this.offsets[a]! - this.offsets[b]!);
    this.texts = new Array(n);
    for (let i = 0; i < n; ) {
      const start = this.offsets[order[i]!]!;
      let end = start + this.lengths[order[i]!]! + 1;
      let j = i + 1;
      for (; j < n; j++) {
        const next = this.offsets[order[j]!]!;
        const nextEnd = next + this.lengths[order[j]!]! + 1;
        if (next - end > GAP_BYTES || nextEnd - start > SPAN_BYTES) break;
        end = Math.max(end, nextEnd);
      }
      const buf = end - start <= SPAN_BYTES ? this.span.subarray(0, end - start) : Buffer.allocUnsafe(end - start);
      try {
        if (fs.readSync(this.fd, buf, 0, buf.length, start) !== buf.length) return false;
      } catch {
        return false;
      }
      for (let k = i; k < j; k++) {
        const line = order[k]!;
        const at = this.offsets[line]! - start;
        const length = this.lengths[line]!;
        if (buf[at + length] !== 10) return false;
        this.texts[line] = buf.toString('utf8', at, at + length);
      }
      i = j;
    }
    return true;
  }

  /**
   * Folds one entity from its lines read; should two keys share both hashes (never seen, but exact), from every line
   * of its subgroup (the earlier ones read one by one), so that each key's entity is folded whole.
   */
  private fold(entity: Entity): boolean {
    const w = this.lines.words;
    const where = (k: number): LinePosition => {
      const x = (entity.at + k) * ENTRY_WORDS;
      return { offset: joinOffset(w[x + 2]!, w[x + 3]!), length: w[x + 4]!, line: w[x + 5]! };
    };
    const read: { record: JournalRecord; at: LinePosition; key: string }[] = [];
    const take = (record: JournalRecord | undefined, at: LinePosition) => {
      const key = record === undefined ? undefined : this.spec.keyOf!(record);
      if (record === undefined || key === undefined) return false;
      read.push({ record, at, key });
      return true;
    };
    for (let k = entity.from; k < entity.count; k++) {
      const decoded = decodeRecord(this.texts[entity.first + k - entity.from]!, TRUST_VOUCHED);
      if (!take(decoded.ok ? decoded.record : undefined, where(k))) return false;
    }
    if (entity.from > 0 && read.some((r) => r.key !== read[0]!.key)) {
      const later = read.splice(0);
      for (let k = 0; k < entity.from; k++) if (!take(readVerified(this.fd, where(k), TRUST_VOUCHED), where(k))) return false;
      read.push(...later);
    }
    const scratch = this.spec.initial();
    for (const r of read) this.spec.evolve(scratch, r.record, r.at);
    // As candidates always valid: the version (words 4–5) is set as they go out.
    const out = this.out;
    const asRefolded = {
      push: (w0: number, w1: number, w2: number, w3: number, _vh: number, _vl: number, w6 = 0, w7 = 0) => out.push(w0, w1, w2, w3, REFOLDED, 0, w6, w7),
    };
    for (const key of new Set(read.map((r) => r.key))) secondaryEntries(asRefolded, this.spec, scratch, key, 0, false);
    return true;
  }
}
