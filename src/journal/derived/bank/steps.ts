// The case bank's snapshot encoding (codec.ts's layout), whole (encodeBank) or in bounded steps (SnapshotCodec.steps):
// made about `budget` bytes at a time from a cursor, so that rewriting the snapshot of 1M cases (~150 MB) is
// spread over many writes instead of paid by one (journal/derived/snapshot-build.ts). Each step is handed the
// same bank (its snapshot, with the changes frozen when the rewrite began) and reads of it only what its own
// bytes need (a slice of a column, a run of postings): a step's time and memory follow its budget, not the bank.
//
// The cursor is plain data: the section being written, a position in it, and what the first steps computed for
// all the others (each term's live postings, every section's length). Dead slots are dropped and the rest
// renumbered in order; a section that does not come out at the length planned for it (a bank
// whose postings disagree with its counts) gives the rewrite up rather than write a snapshot that lies.
import type { Bank } from './bank';
import { bankHead, NUMERIC, pad8, sectionLengths } from './codec';
import { Frame, numberAt, sliceOf, writeColumn, writeIdHash, writeIds, writePostings, type StepCursor as Cursor } from './step-writers';
import { StepSink } from './step-sink';
import { tagCounts, tallyOf } from './tag-tally';
import { liveCreatedOrdered, writeOrder } from './key-order';

const SECTIONS = ['head', 'ids', 'vocab', ...NUMERIC.map(([name]) => name as string)];

/** The bank's whole encoding: one step without a budget. */
export function encodeBank(bank: Bank): Buffer {
  const out = stepBank(bank, undefined, Number.POSITIVE_INFINITY);
  if (out?.done !== true) throw new RangeError('the bank does not encode: its postings disagree with its counts');
  return out.bytes;
}

/**
 * The next piece of the bank's encoding after `cursor` (undefined: from the start), about `budget` bytes: the
 * bytes, the whole body's length (once known), whether the body is complete, and the cursor to continue from.
 * undefined when this bank cannot be encoded in steps (its cache's removals cannot be told) or a section did not
 * come out at its planned length.
 */
export function stepBank(bank: Bank, cursor: unknown, budget: number): { bytes: Buffer; length: number | undefined; done: boolean; next: unknown } | undefined {
  const killed = killedSlots(bank);
  if (killed === undefined) return undefined;
  const frame = new Frame(bank, killed, budget);
  const c = cursor === undefined ? firstCursor(frame) : (structuredClone(cursor) as Cursor);
  if (!isCursor(c, frame)) return undefined;
  const sink = new StepSink(budget);
  if (c.section === -1 && countStep(frame, c, sink)) beginWriting(frame, c);
  if (budget === Number.POSITIVE_INFINITY && c.lengths !== undefined) sink.reserve(bodyLength(bank, c)! - c.off);
  while (c.section >= 0 && c.section < SECTIONS.length && !sink.full) {
    if (!writeSection(frame, c, sink)) continue;
    const length = sectionLength(bank, c, c.section);
    if (c.off + sink.length - c.start !== length) return undefined;
    sink.zeros(pad8(length) - length);
    c.section += 1;
    c.pos = c.sub = c.at = 0;
    c.start = c.off + sink.length;
  }
  const bytes = sink.take();
  c.off += bytes.length;
  return { bytes, length: bodyLength(bank, c), done: c.section === SECTIONS.length, next: c };
}

/** The cached slots removed since the cache, in order; undefined when the bank cannot tell them. */
function killedSlots(bank: Bank): number[] | undefined {
  const overlaid = bank.alive.overlaid();
  if (overlaid === undefined) return undefined;
  const killed: number[] = [];
  for (const [slot, alive] of overlaid) if (alive === 0 && slot < bank.cachedSlots) killed.push(slot);
  return killed.sort((a, b) => a - b);
}

function firstCursor(frame: Frame): Cursor {
  const c: Cursor = {
    section: -1,
    pos: 0,
    sub: 0,
    at: 0,
    off: 0,
    start: 0,
    counts: new Array(frame.vocab).fill(0),
    lengths: undefined,
    tally: undefined,
    ordered: undefined,
  };
  // With no cached slot removed, each term's live postings are its cached ones and its live later ones.
  if (frame.killed.length === 0) {
    for (let t = 0; t < frame.vocab; t++) {
      const [from, to] = frame.cachedRange(t);
      c.counts[t] = to - from + liveLater(frame, t);
    }
    beginWriting(frame, c);
  }
  return c;
}

const isCursor = (c: Cursor, frame: Frame): boolean =>
  c !== null &&
  typeof c === 'object' &&
  Number.isSafeInteger(c.section) &&
  c.section >= -1 &&
  c.section <= SECTIONS.length &&
  [c.pos, c.sub, c.at, c.off, c.start].every((n) => Number.isSafeInteger(n) && n >= 0) &&
  Array.isArray(c.counts) &&
  c.counts.length === frame.vocab &&
  (c.lengths === undefined ||
    (Array.isArray(c.lengths) && c.lengths.length === SECTIONS.length - 1 && c.tally !== undefined && typeof c.ordered === 'boolean'));

function liveLater(frame: Frame, t: number): number {
  let n = 0;
  for (const s of frame.bank.laterPostingsOf(t)) if (frame.slotOf(s) >= 0) n++;
  return n;
}

/** Counts each term's live postings (cached slots were removed: each must be looked at); true when done. */
function countStep(frame: Frame, c: Cursor, sink: StepSink): boolean {
  const postSlots = frame.bank.cache.postSlots;
  while (c.pos < frame.vocab && !sink.full) {
    const [from, to] = frame.cachedRange(c.pos);
    if (c.sub < to - from) {
      const take = Math.min(to - from - c.sub, frame.batch);
      const slots = sliceOf(postSlots, from + c.sub, from + c.sub + take);
      let n = 0;
      for (let i = 0; i < slots.length; i++) if (slots[i]! < frame.base && frame.slotOf(slots[i]!) >= 0) n++;
      c.counts[c.pos]! += n;
      c.sub += take;
      sink.work += take * 4;
      continue;
    }
    c.counts[c.pos]! += liveLater(frame, c.pos);
    c.pos += 1;
    c.sub = 0;
  }
  return c.pos >= frame.vocab;
}

/** With the counts known: every section's length, and the head first. */
function beginWriting(frame: Frame, c: Cursor): void {
  const postings = c.counts.reduce((a, b) => a + b, 0);
  c.lengths = sectionLengths(idsLength(frame), Buffer.byteLength(frame.bank.vocab.join('\n')), frame.live, frame.vocab, postings);
  // Success by tag over the live slots, for the head: from the snapshot's own and the changes since where it has one.
  c.tally = tallyOf(tagCounts(frame.bank));
  c.ordered = liveCreatedOrdered(frame.bank);
  c.section = 0;
  c.pos = c.sub = c.at = 0;
  c.start = c.off;
}

/** The joined live ids' byte length: the cache's, less its removed ids, and the live ones folded since. */
function idsLength(frame: Frame): number {
  const { idStarts, idBytes } = frame.bank.cache;
  let total = frame.base > 0 ? idBytes.length + 1 : 0;
  for (const s of frame.killed) total -= (s + 1 < frame.base ? numberAt(idStarts, s + 1) : idBytes.length + 1) - numberAt(idStarts, s);
  for (let s = frame.base; s < frame.slots; s++) if (frame.slotOf(s) >= 0) total += Buffer.byteLength(frame.bank.idOf(s)) + 1;
  return frame.live > 0 ? total - 1 : 0;
}

function sectionLength(bank: Bank, c: Cursor, section: number): number {
  return section === 0 ? bankHead(bank.liveRecordBytes, c.lengths!, c.tally!, c.ordered!).length : c.lengths![section - 1]!;
}

function bodyLength(bank: Bank, c: Cursor): number | undefined {
  if (c.lengths === undefined) return undefined;
  return pad8(sectionLength(bank, c, 0)) + c.lengths.reduce((sum, n) => sum + pad8(n), 0);
}

/** Writes more of section `c.section`; true when it is complete (its padding aside). */
function writeSection(frame: Frame, c: Cursor, sink: StepSink): boolean {
  const bank = frame.bank;
  const name = SECTIONS[c.section]!;
  switch (name) {
    case 'head':
      sink.bytes(bankHead(bank.liveRecordBytes, c.lengths!, c.tally!, c.ordered!));
      return true;
    case 'ids':
    case 'idStarts':
      return writeIds(frame, c, sink, name === 'idStarts');
    case 'vocab':
      sink.bytes(Buffer.from(bank.vocab.join('\n')));
      return true;
    case 'postStart':
      while (c.pos <= frame.vocab && !sink.full) {
        sink.u32(c.at);
        if (c.pos < frame.vocab) c.at += c.counts[c.pos]!;
        c.pos += 1;
      }
      return c.pos > frame.vocab;
    case 'postSlots':
    case 'postMeta':
      return writePostings(frame, c, sink, name === 'postMeta');
    case 'idHash':
      return writeIdHash(frame, c, sink);
    case 'byCreated':
      return writeOrder(frame, c, sink, 'created', c.ordered!);
    case 'byReward':
      return writeOrder(frame, c, sink, 'reward', c.ordered!);
    case 'byReused':
      return writeOrder(frame, c, sink, 'reused', c.ordered!);
    default:
      return writeColumn(frame, c, sink, name);
  }
}
