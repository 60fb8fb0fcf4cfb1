// The case bank's snapshot built by streaming the journal (SnapshotCodec.stream): exactly encodeBank's bytes for
// the bank a replay folds, in memory that follows the vocabulary and its buffers, and a little over 2 bytes a case
// (each put's posting meta, and whether it is live) — the first read after cache/ was lost at 1M cases held ~1.9 GiB
// as a replay.
//
// The scan (keep) gives each whole case put (recorded or imported, foldable) an ordinal and writes, to scratch
// files: its id's bytes; a row of its numbers (PUT_BYTES each); and a posting (term, ordinal) per term, its
// terms interned in the order a replay interns them. Every event on a case id (put, reused, deleted) goes to a
// sort by the id's hash. Then `finish` walks that sort an id at a time (ids that share the hash are told apart by
// their bytes, read back): an id's last put is live unless a deletion follows it, and its reuse count is the
// last one set after it. The sections then go out in order of the rows: ids, their starts and the numbers of the
// live puts (each renumbered in order, as columnsOf drops dead slots); the postings a range of terms at a time
// (as many as POSTINGS_AT_ONCE hold), each range one pass over the postings file; the (id hash, slot) pairs
// through another sort.
//
// Only what was kept up to the last record taken counts (the rest is a batch that never completed): its ids end
// where the last taken record left the ids file, so the events, puts and terms past that are left out.
import type { JournalRecord } from '../../codec/record';
import type { LinePosition } from '../../codec/line';
import type { Scratch, ScratchFile, ScratchSort, SnapshotStream } from '../../codec/store-spec';
import { idHash32 } from './bank';
import { bankHead, NUMERIC, pad8, sectionLengths } from './codec';
import { packMeta, type BankFacts } from './layout';
import { Forward, Section, Staged, type Put } from './stream-io';
import { numberSortKey } from './key-order';
import { EV_DELETED, EV_PUT, EV_REUSED, type Live, liveOf, POSTINGS_PER_READ, termCounts, TWO32, writePostings } from './stream-live';

/** What an accepted record does to a bank: puts a whole case (replacing its id's), sets a reuse count, deletes. */
export type BankEvent =
  | { readonly kind: 'put'; readonly facts: BankFacts; readonly terms: ReadonlySet<string> }
  | { readonly kind: 'reused'; readonly id: string; readonly count: number }
  | { readonly kind: 'deleted'; readonly id: string };

/** The domain's reading of the case journal, for a build that folds records without the domain (stream.ts). */
export interface BankRules {
  /** undefined: the record changes nothing (not a case event, or a put that is not a whole case). */
  eventOf(record: JournalRecord): BankEvent | undefined;
}

/** A put's row: f64 reward, created, reused, recOffset, idAt; u32 termCount, recLength, recLine, idLen, id hash, success. */
const PUT_BYTES = 64;
const F = { reward: 0, created: 1, reused: 2, recOffset: 3, idAt: 4 } as const;
const U = { termCount: 10, recLength: 11, recLine: 12, idLen: 13, hash: 14, success: 15 } as const;
const ROWS_AT_ONCE = 1 << 14;
/** Postings (6 bytes each in memory) placed per pass over the postings file. */
const POSTINGS_AT_ONCE = 1 << 22;

/** The streamed build; `sizes` makes its batches smaller (tests, to cross their edges). */
export function streamBank(rules: BankRules, scratch: Scratch, sizes: { rows?: number; postings?: number } = {}): SnapshotStream {
  return new BankStream(rules, scratch, sizes.rows ?? ROWS_AT_ONCE, sizes.postings ?? POSTINGS_AT_ONCE);
}

class BankStream implements SnapshotStream {
  private readonly ids: Staged;
  private readonly rows: ScratchFile;
  private readonly postings: ScratchFile;
  private readonly events: ScratchSort;
  /** Every term, by its number (in the order Bank.add interns them), and the number of each. */
  private readonly vocab: string[] = [];
  private readonly termIds = new Map<string, number>();
  private readonly rowBuf: ArrayBuffer;
  private readonly rowF: Float64Array;
  private readonly rowU: Uint32Array;
  private rowCount = 0;
  private readonly postBuf = new Uint32Array(2 * POSTINGS_PER_READ);
  private postCount = 0;
  /** Each put's packMeta, by ordinal: what its postings carry (2 bytes a put, kept in memory). */
  private metas = new Uint16Array(1024);
  private puts = 0;
  /** The ids file's length after the last record taken. */
  private committed = 0;

  constructor(
    private readonly rules: BankRules,
    private readonly scratch: Scratch,
    private readonly rowsAtOnce: number,
    private readonly postingsAtOnce: number,
  ) {
    this.rowBuf = new ArrayBuffer(PUT_BYTES * rowsAtOnce);
    this.rowF = new Float64Array(this.rowBuf);
    this.rowU = new Uint32Array(this.rowBuf);
    this.ids = new Staged(scratch.file());
    this.rows = scratch.file();
    this.postings = scratch.file();
    this.events = scratch.sort(2);
  }

  keep(record: JournalRecord, at: LinePosition): number {
    const event = this.rules.eventOf(record);
    if (event?.kind === 'put') this.put(event.facts, event.terms, at);
    else if (event?.kind === 'reused') this.event(EV_REUSED, event.id, event.count % TWO32, Math.floor(event.count / TWO32));
    else if (event?.kind === 'deleted') this.event(EV_DELETED, event.id, 0, 0);
    return this.ids.size;
  }

  take(kept: number): void {
    this.committed = kept;
  }

  /** A put as Bank.add folds it, its terms interned in the order add interns them. */
  private put(fields: BankFacts, terms: ReadonlySet<string>, at: LinePosition): void {
    const ord = this.puts++;
    const [idAt, idLen] = this.ids.add(fields.id);
    const termCount = terms.size;
    const meta = packMeta(fields.reward, termCount, fields.success);
    for (const term of fields.marks === undefined ? terms : [...terms, ...fields.marks]) {
      let id = this.termIds.get(term);
      if (id === undefined) this.termIds.set(term, (id = this.vocab.push(term) - 1));
      if (this.postCount === POSTINGS_PER_READ) this.flushPostings();
      const x = 2 * this.postCount++;
      this.postBuf[x] = id;
      this.postBuf[x + 1] = ord;
    }
    if (ord === this.metas.length) {
      const grown = new Uint16Array(2 * ord);
      grown.set(this.metas);
      this.metas = grown;
    }
    this.metas[ord] = meta;
    if (this.rowCount === this.rowsAtOnce) this.flushRows();
    const f = this.rowCount * (PUT_BYTES / 8);
    const u = this.rowCount * (PUT_BYTES / 4);
    this.rowCount += 1;
    this.rowF[f + F.reward] = fields.reward;
    this.rowF[f + F.created] = fields.created;
    this.rowF[f + F.reused] = fields.reused;
    this.rowF[f + F.recOffset] = at.offset;
    this.rowF[f + F.idAt] = idAt;
    this.rowU[u + U.termCount] = termCount;
    this.rowU[u + U.recLength] = at.length;
    this.rowU[u + U.recLine] = at.line;
    this.rowU[u + U.idLen] = idLen;
    this.rowU[u + U.hash] = idHash32(fields.id);
    this.rowU[u + U.success] = fields.success ? 1 : 0;
    const [hi, lo] = this.scratch.keyHash(fields.id);
    this.events.push(hi, lo, Math.floor(idAt / TWO32), idAt % TWO32, EV_PUT, ord, idLen, at.length);
  }

  /** An event on a case id that is not a put: its id goes to the ids file too (to be told apart from another of the same hash). */
  private event(kind: number, id: string, lo32: number, hi32: number): void {
    const [idAt, idLen] = this.ids.add(id);
    const [hi, lo] = this.scratch.keyHash(id);
    this.events.push(hi, lo, Math.floor(idAt / TWO32), idAt % TWO32, kind | (hi32 << 2), lo32, idLen, 0);
  }

  private flushRows(): void {
    this.rows.append(new Uint8Array(this.rowBuf, 0, this.rowCount * PUT_BYTES));
    this.rowCount = 0;
  }

  private flushPostings(): void {
    this.postings.append(new Uint8Array(this.postBuf.buffer, 0, this.postCount * 8));
    this.postCount = 0;
  }

  finish(): { readonly length: number; write(put: (bytes: Uint8Array, at: number) => void): void } {
    this.flushRows();
    this.flushPostings();
    this.ids.flush();
    const puts = this.committedPuts();
    const live = liveOf(this.events.merged(), this.ids.file, this.committed, puts, this.scratch.sort(2));
    const { df, vocabCount, tally } = termCounts(this.postings, live, puts, this.vocab, this.metas);
    const postings = df.reduce((a, b) => a + b, 0);
    const vocabText = Buffer.from(this.vocab.slice(0, vocabCount).join('\n'));
    const sections = sectionLengths(live.count > 0 ? live.idBytes + live.count - 1 : 0, vocabText.length, live.count, vocabCount, postings);
    // Whether created never decreases over the live slots is told by the columns' pass: the head (of one length
    // either way) goes out after them.
    const headOf = (ordered: boolean) => bankHead(live.recordBytes, sections, tally, ordered);
    const head = headOf(false);
    // Each section's place in the body and its length, by name.
    const at = new Map<string, [number, number]>();
    let offset = pad8(head.length);
    ['ids', 'vocab', ...NUMERIC.map(([name]) => name as string)].forEach((name, i) => {
      at.set(name, [offset, sections[i]!]);
      offset += pad8(sections[i]!);
    });
    const section = (put: Put, name: string) => new Section(put, ...at.get(name)!);
    return {
      length: offset,
      write: (put) => {
        put(vocabText, at.get('vocab')![0]);
        const hashes = this.scratch.sort(2);
        const orders = { byCreated: this.scratch.sort(2), byReward: this.scratch.sort(2), byReused: this.scratch.sort(2) };
        put(headOf(this.writeColumns(put, section, live, puts, hashes, orders)), 0);
        for (const [name, sorted] of Object.entries(orders)) {
          const order = section(put, name);
          for (const m = sorted.merged(); !m.done; m.next()) order.u32(m.words[m.index * 8 + 2]!);
          order.end();
        }
        writePostings(put, section, this.postings, live, df, this.metas, this.postingsAtOnce);
        const pairs = section(put, 'idHash');
        for (const m = hashes.merged(); !m.done; m.next()) {
          pairs.u32(m.words[m.index * 8]!);
          pairs.u32(m.words[m.index * 8 + 2]!);
        }
        pairs.end();
      },
    };
  }

  /** How many puts the records taken made: those whose id starts before the ids file's committed length. */
  private committedPuts(): number {
    const cell = new Float64Array(1);
    const idAt = (ord: number) => {
      this.rows.read(new Uint8Array(cell.buffer), ord * PUT_BYTES + F.idAt * 8);
      return cell[0]!;
    };
    let lo = 0;
    let hi = this.puts;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (idAt(mid) < this.committed) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Ids, their starts and the per-slot numbers of the live puts, in order; each one's (id hash, slot) into `hashes`,
   * (created, slot), (reward, slot) and (reused, slot) into `orders`. Answers whether created never decreases over them.
   */
  private writeColumns(
    put: Put,
    section: (put: Put, name: string) => Section,
    live: Live,
    puts: number,
    hashes: ScratchSort,
    orders: Record<'byCreated' | 'byReward' | 'byReused', ScratchSort>,
  ): boolean {
    const out = Object.fromEntries(
      ['ids', 'idStarts', 'reward', 'created', 'success', 'reused', 'termCount', 'recOffset', 'recLength', 'recLine'].map((n) => [n, section(put, n)]),
    );
    const ids = new Forward(this.ids.file);
    const reuse = live.reused.merged();
    const buf = new ArrayBuffer(PUT_BYTES * this.rowsAtOnce);
    const f = new Float64Array(buf);
    const u = new Uint32Array(buf);
    const bits = new Float64Array(1);
    const bitsU = new Uint32Array(bits.buffer);
    let slot = 0;
    let idStart = 0;
    let ordered = true;
    let last = Number.NEGATIVE_INFINITY;
    for (let first = 0; first < puts; first += this.rowsAtOnce) {
      const n = Math.min(this.rowsAtOnce, puts - first);
      if (this.rows.read(new Uint8Array(buf, 0, n * PUT_BYTES), first * PUT_BYTES) !== n * PUT_BYTES) throw new RangeError('a scratch file came back short');
      for (let r = 0; r < n; r++) {
        const ord = first + r;
        if (!live.has(ord)) continue;
        const fx = r * (PUT_BYTES / 8);
        const ux = r * (PUT_BYTES / 4);
        const idLen = u[ux + U.idLen]!;
        if (slot > 0) out.ids!.u8(10);
        out.ids!.bytes(ids.bytes(f[fx + F.idAt]!, idLen));
        out.idStarts!.u32(idStart);
        idStart += idLen + 1;
        let reused = f[fx + F.reused]!;
        if (!reuse.done && reuse.words[reuse.index * 8] === ord) {
          bitsU[0] = reuse.words[reuse.index * 8 + 2]!;
          bitsU[1] = reuse.words[reuse.index * 8 + 3]!;
          reused = bits[0]!;
          reuse.next();
        }
        const reward = f[fx + F.reward]!;
        out.reward!.f64(reward);
        const created = f[fx + F.created]!;
        if (!(created >= last)) ordered = false;
        last = created;
        out.created!.f64(created);
        out.success!.u8(u[ux + U.success]!);
        out.reused!.f64(reused);
        out.termCount!.u32(u[ux + U.termCount]!);
        out.recOffset!.f64(f[fx + F.recOffset]!);
        out.recLength!.u32(u[ux + U.recLength]!);
        out.recLine!.u32(u[ux + U.recLine]!);
        hashes.push(u[ux + U.hash]!, 0, slot, 0, 0, 0);
        orders.byCreated.push(...numberSortKey(created), slot, 0, 0, 0);
        orders.byReward.push(...numberSortKey(reward), slot, 0, 0, 0);
        orders.byReused.push(...numberSortKey(reused), slot, 0, 0, 0);
        slot += 1;
      }
    }
    for (const s of Object.values(out)) s.end();
    return ordered;
  }
}
