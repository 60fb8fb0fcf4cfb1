// Loading a store's state: a full, verifying replay, or (with a valid key index) only one entity's lines.
import * as fs from 'node:fs';
import { scanJournal, type LinePosition, type ScanResult } from './scan';
import { EMPTY_HEAD, type ChainHead, type JournalRecord } from './record';
import { LiveEstimate, openIndex, statJournal, type IndexEntry, type IndexHeader } from './key-index';
import type { StoreSpec } from './store-spec';

export interface Reporter {
  warn(message: string): void;
}

/** A store's state as a transaction holds it, with what appending and re-indexing need. */
export interface Loaded<S> {
  state: S;
  /** True when the state holds every entity (a full replay); false when only the keys asked for. */
  full: boolean;
  head: ChainHead;
  bytes: number;
  lines: number;
  records: number;
  tornTail: ScanResult['tornTail'];
  scan?: ScanResult;
  /** How the key index is kept after writes: extended in place, or rebuilt from every entry. */
  index?:
    | { mode: 'extend'; header: IndexHeader; estimate: LiveEstimate; added: IndexEntry[] }
    | { mode: 'rebuild'; estimate: LiveEstimate; entries: IndexEntry[] };
}

export type OnRecord = (at: LinePosition) => void;

/** Replays the whole journal, verifying every line; reports each problem once unless quiet. */
export function replayFull<S>(
  path: string,
  spec: StoreSpec<S>,
  reporter: Reporter,
  opts: { quiet?: boolean; onRecord?: OnRecord | undefined } = {},
): Loaded<S> & { scan: ScanResult } {
  const state = spec.initial();
  const keyOf = spec.keyOf;
  const entries: IndexEntry[] = [];
  const estimate = new LiveEstimate();
  const scan = scanJournal(path, spec.vocabulary, (record, at) => {
    spec.evolve(state, record, at);
    if (keyOf !== undefined) {
      const key = keyOf(record);
      if (key !== undefined) {
        entries.push({ key, ...at });
        estimate.add(key, at.length);
      }
    }
    opts.onRecord?.(at);
  });
  if (!opts.quiet) {
    for (const problem of scan.problems) {
      // A torn tail is the last write of a killed process: the next write quarantines it.
      if (problem.offset === scan.tornTail?.offset) continue;
      reporter.warn(`${path}:${problem.line}: ${problem.reason} (run \`crux journal check\`)`);
    }
  }
  return {
    state,
    full: true,
    head: scan.head,
    bytes: scan.bytes,
    lines: scan.lines,
    records: scan.records,
    tornTail: scan.tornTail,
    scan,
    ...(keyOf !== undefined ? { index: { mode: 'rebuild' as const, estimate, entries } } : {}),
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
    return { state: spec.initial(), full: true, head: EMPTY_HEAD, bytes: 0, lines: 0, records: 0, tornTail: undefined, index: { mode: 'rebuild', estimate, entries: [] } };
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

function readRecordAt(fd: number, at: LinePosition): JournalRecord | undefined {
  const buf = Buffer.allocUnsafe(at.length + 1);
  if (fs.readSync(fd, buf, 0, buf.length, at.offset) !== buf.length || buf[at.length] !== 10) return undefined;
  try {
    const record = JSON.parse(buf.toString('utf8', 0, at.length));
    return record !== null && typeof record === 'object' && typeof record.ev === 'string' ? (record as JournalRecord) : undefined;
  } catch {
    return undefined;
  }
}
