// Loading a store's state: a full, verifying replay, or (with a valid key index) only one entity's lines.
// A plain require: esbuild wraps a namespace import in a per-module copy of every fs export.
const fs = require('node:fs') as typeof import('node:fs');
import { scanJournal, type LinePosition, type ScanResult } from './scan';
import { decodeRecord, EMPTY_HEAD, TRUST_VOUCHED, type ChainHead, type JournalRecord } from './record';
import { entryFor, indexMatches, LiveEstimate, openIndex, statJournal, type IndexEntry, type IndexHeader } from './key-index';
import { openSnapshot } from './snapshot';
import type { StoreSpec } from './store-spec';

export interface Reporter {
  warn(message: string): void;
  /** A damaged line a replay passed over, as data (--json documents carry it as a warning). */
  damage?(file: string, line: number, reason: string): void;
}

/** A store's state as a transaction holds it, with what appending and re-indexing need. */
export interface Loaded<S> {
  state: S;
  /** True when the state holds every entity; false when only the keys asked for. */
  full: boolean;
  /** How it was loaded: a verifying replay, an entity's lines, or a snapshot and the records after it. */
  source: 'replay' | 'keys' | 'snapshot';
  head: ChainHead;
  /** Where the head record's line is, when known (for snapshots). */
  headAt?: LinePosition | undefined;
  bytes: number;
  lines: number;
  records: number;
  tornTail: ScanResult['tornTail'];
  /** Lines that failed verification (a torn tail aside): caches are not written over a damaged journal. */
  damaged: boolean;
  scan?: ScanResult;
  /** How the key index is kept after writes: extended in place, or rebuilt from every entry. */
  index?:
    | { mode: 'extend'; header: IndexHeader; estimate: LiveEstimate; added: IndexEntry[] }
    | { mode: 'rebuild'; estimate: LiveEstimate; entries: IndexEntry[] };
}

export type OnRecord = (at: LinePosition) => void;

const isDamaged = (scan: ScanResult) => scan.problems.some((p) => p.offset !== scan.tornTail?.offset);

/** Replays the whole journal, verifying every line; reports each problem once unless quiet. */
export function replayFull<S>(
  path: string,
  spec: StoreSpec<S>,
  reporter: Reporter,
  opts: { quiet?: boolean; onRecord?: OnRecord | undefined } = {},
): Loaded<S> & { scan: ScanResult } {
  const state = spec.initial();
  const keyed = spec.keyOf !== undefined;
  const entries: IndexEntry[] = [];
  const estimate = new LiveEstimate();
  const scan = scanJournal(path, spec.vocabulary, (record, at) => {
    spec.evolve(state, record, at);
    const entry = keyed ? entryFor(spec, record, at) : undefined;
    if (entry !== undefined) {
      entries.push(entry);
      estimate.add(entry.key, at.length);
    }
    opts.onRecord?.(at);
  });
  if (!opts.quiet) {
    for (const problem of scan.problems) {
      // A torn tail is the last write of a killed process: the next write quarantines it.
      if (problem.offset === scan.tornTail?.offset) continue;
      reporter.warn(`${path}:${problem.line}: ${problem.reason} (run \`crux journal check\`)`);
      reporter.damage?.(spec.file, problem.line, problem.reason);
    }
  }
  return {
    state,
    full: true,
    source: 'replay',
    damaged: isDamaged(scan),
    head: scan.head,
    headAt: scan.headAt,
    bytes: scan.bytes,
    lines: scan.lines,
    records: scan.records,
    tornTail: scan.tornTail,
    scan,
    ...(keyed ? { index: { mode: 'rebuild' as const, estimate, entries } } : {}),
  };
}

/**
 * Loads only the entities `keys` from a valid key index, without replaying the journal; undefined when the
 * index is missing or stale (then the caller replays in full). Lines are trusted because the index names the
 * journal's exact stat at the time a writer verified and wrote it; `journal check` always reads every byte.
 */
export function loadKeys<S>(root: string, path: string, spec: StoreSpec<S>, keys: readonly string[]): Loaded<S> | undefined {
  if (spec.keyOf === undefined) return undefined;
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
    const estimate = new LiveEstimate();
    return { state: spec.initial(), full: true, source: 'replay', damaged: false, head: EMPTY_HEAD, bytes: 0, lines: 0, records: 0, tornTail: undefined, index: { mode: 'rebuild', estimate, entries: [] } };
  }
  try {
    const stat = statJournal(fd);
    if (stat === undefined) return undefined;
    const index = openIndex(root, spec.file, stat);
    if (index === undefined) return undefined;
    const state = spec.initial();
    const estimate = new LiveEstimate(index.header.live);
    for (const key of keys) {
      const positions = index.linesOf(key);
      estimate.seed(key, positions);
      for (const at of positions) {
        const record = readRecordAt(fd, at);
        if (record === undefined || !spec.vocabulary.has(record.ev) || spec.keyOf(record) !== key) return undefined;
        spec.evolve(state, record, at);
      }
    }
    const { header } = index;
    return {
      state,
      full: false,
      source: 'keys',
      damaged: false,
      head: { seq: header.seq, h: header.h },
      bytes: header.size,
      lines: header.lines,
      records: header.lines,
      tornTail: undefined,
      index: { mode: 'extend', header, estimate, added: [] },
    };
  } finally {
    fs.closeSync(fd);
  }
}

export function readRecordAt(fd: number, at: LinePosition): JournalRecord | undefined {
  const buf = Buffer.allocUnsafe(at.length + 1);
  if (fs.readSync(fd, buf, 0, buf.length, at.offset) !== buf.length || buf[at.length] !== 10) return undefined;
  // Read where a verified cache points (the key index, a snapshot's bank): the line is trusted, not re-hashed.
  const decoded = decodeRecord(buf.toString('utf8', 0, at.length), TRUST_VOUCHED);
  return decoded.ok ? decoded.record : undefined;
}

/**
 * Loads the whole state from the store's snapshot and the records crux wrote after it (see snapshot.ts for
 * when that is trusted); undefined when there is no usable snapshot (then the caller replays in full).
 */
export function loadSnapshot<S>(root: string, path: string, spec: StoreSpec<S>, opts: { forWrite?: boolean } = {}): Loaded<S> | undefined {
  const codec = spec.snapshot;
  if (codec === undefined) return undefined;
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const stat = statJournal(fd);
    if (stat === undefined) return undefined;
    const snap = openSnapshot(root, spec.file, codec.version, stat);
    if (snap === undefined) return undefined;
    const { header } = snap;
    const exact = stat.size === header.size && stat.mtime_ns === header.mtime_ns && stat.ctime_ns === header.ctime_ns;
    // Records after the snapshot are trusted to continue it only when crux wrote them: the key index, which
    // every crux write keeps in step, must describe the journal exactly. Another program's edit fails that.
    if (!exact && (stat.size === header.size || !indexMatches(root, spec.file, stat))) return undefined;
    if (!exact && header.seq > 0) {
      const headRecord = readRecordAt(fd, { line: header.lines, offset: header.head_offset, length: header.head_length });
      if (headRecord?.h !== header.h || headRecord.seq !== header.seq || header.head_offset + header.head_length + 1 !== header.size) return undefined;
    }
    const state = codec.decode(snap.payload);
    if (state === undefined) return undefined;
    // Only a writer extends the key index; a reader need not read it.
    const index = opts.forWrite ? openIndex(root, spec.file, stat) : undefined;
    const indexPart = index === undefined ? {} : { index: { mode: 'extend' as const, header: index.header, estimate: new LiveEstimate(index.header.live), added: [] } };
    if (exact) {
      const headAt = { line: header.lines, offset: header.head_offset, length: header.head_length };
      return { state, full: true, source: 'snapshot', damaged: false, head: { seq: header.seq, h: header.h }, headAt, bytes: header.size, lines: header.lines, records: header.lines, tornTail: undefined, ...indexPart };
    }
    // The key index matched, so crux wrote every record after the snapshot and verified all before it: they
    // are read like the key index's lines, without re-hashing.
    const tail = Buffer.allocUnsafe(stat.size - header.size);
    if (fs.readSync(fd, tail, 0, tail.length, header.size) !== tail.length || tail[tail.length - 1] !== 10) return undefined;
    let line = header.lines;
    let offset = header.size;
    let last: JournalRecord | undefined;
    let lastAt: LinePosition | undefined;
    for (let start = 0; start < tail.length; ) {
      const end = tail.indexOf(10, start);
      const at = { line: ++line, offset, length: end - start };
      const decoded = decodeRecord(tail.toString('utf8', start, end), TRUST_VOUCHED);
      if (!decoded.ok) return undefined;
      const record = decoded.record;
      if (spec.vocabulary.has(record.ev)) spec.evolve(state, record, at);
      last = record;
      lastAt = at;
      offset += at.length + 1;
      start = end + 1;
    }
    const head = last === undefined ? { seq: header.seq, h: header.h } : { seq: last.seq, h: last.h };
    const headAt = lastAt ?? { line: header.lines, offset: header.head_offset, length: header.head_length };
    return { state, full: true, source: 'snapshot', damaged: false, head, headAt, bytes: stat.size, lines: line, records: line, tornTail: undefined, ...indexPart };
  } finally {
    fs.closeSync(fd);
  }
}
