// Loads through a store's index — the entities a command names, or the candidates of a query — and the
// upkeep that keeps the index in step with a transaction's appends (to the open index, or collected during
// a replay for a whole new base).
import { fs } from '../../shared/fs';
import type { JournalRecord } from '../codec/record';
import type { LinePosition, TornTail } from '../codec/scan';
import type { IndexUpkeep, Loaded } from '../codec/loaded';
import type { IndexQuery, NewestQuery, StoreSpec } from '../codec/store-spec';
import { RunMissing } from './index-levels';
import { StoreIndex } from './store-index';
import { openJournalFile } from '../../shared/journal-file';
import { KeyLines } from './entries';

/** The live-bytes estimate of a keyed journal: the sum over keys of each key's largest line, roughly what compaction
 * would keep. Carried in the index (the manifest, each log block) between invocations. */
class LiveEstimate {
  private readonly largest = new Map<string, number>();
  total = 0;

  constructor(initial = 0) {
    this.total = initial;
  }

  /** Seeds a key's largest line from its known lines (when extending an index). */
  seed(key: string, lines: readonly LinePosition[]): void {
    if (!this.largest.has(key)) this.largest.set(key, Math.max(0, ...lines.map((l) => l.length)));
  }

  add(key: string, length: number): void {
    const before = this.largest.get(key) ?? 0;
    if (length > before) {
      this.largest.set(key, length);
      this.total += length - before;
    }
  }
}

/** The upkeep of an index open for a writer: its appends go into the next log block. */
export class AppendUpkeep<S> implements IndexUpkeep {
  constructor(
    readonly index: StoreIndex<S>,
    private readonly spec: StoreSpec<S>,
    readonly estimate: LiveEstimate,
    /** The journal's descriptor the index reads through: this upkeep closes it (a long-lived `crux mcp` writes without end). */
    private readonly journalFd: number,
  ) {}
  appended(record: JournalRecord, at: LinePosition): void {
    this.index.appended(record, at);
    const key = this.spec.keyOf?.(record);
    if (key !== undefined) this.estimate.add(key, at.length);
  }
  get live(): number {
    return this.estimate.total;
  }
  release(): void {
    this.index.close();
    fs.closeSync(this.journalFd);
  }
}

/** The upkeep of a replay: every key line seen, for a whole new base. */
export class ReplayUpkeep implements IndexUpkeep {
  readonly lines: KeyLines;
  readonly estimate = new LiveEstimate();
  constructor(spec: StoreSpec<any>) {
    this.lines = new KeyLines(spec);
  }
  appended(record: JournalRecord, at: LinePosition): void {
    const key = this.lines.add(record, at);
    if (key !== undefined) this.estimate.add(key, at.length);
  }
  get live(): number {
    return this.estimate.total;
  }
  release(): void {}
}

function openJournal(path: string): number | undefined {
  try {
    return openJournalFile(path);
  } catch {
    return undefined;
  }
}

/** write: the index stays open for the writer's upkeep; read: a reader's (it drops damage, fills a gap); look: neither. */
type IndexUse = 'write' | 'read' | 'look';
/** What a read through the index answers when the index is not to be used here (no damage: nothing dropped). */
const UNUSED = null;

/**
 * `read` over the journal at `path` and its index, open, when there is one that verifies; undefined when there is
 * none, when `read` answers UNUSED, or after damage (`read` answers undefined: a line the index names does not
 * verify, a page does not; the index is dropped unless the caller only looks). A writer's merge that replaced a run
 * after this opened the manifest is read once more, with the new one. A writer's answer keeps the index and the
 * journal open (its upkeep closes them); every other way out closes them here.
 */
function withIndex<S, T>(
  path: string,
  root: string,
  spec: StoreSpec<S>,
  use: IndexUse,
  read: (index: StoreIndex<S>, fd: number) => T | undefined | typeof UNUSED,
): T | undefined {
  if (spec.keyOf === undefined) return undefined;
  for (let attempt = 0; attempt < 2; attempt++) {
    // No journal (an empty store: nothing to index yet), or one that cannot be opened: the caller replays.
    const fd = openJournal(path);
    if (fd === undefined) return undefined;
    let index: StoreIndex<S> | undefined;
    let handedOver = false;
    try {
      index = StoreIndex.open(root, spec, fd);
      if (index === undefined) return undefined;
      const answer = read(index, fd);
      if (answer === undefined && use !== 'look') index.drop();
      handedOver = use === 'write' && answer !== undefined && answer !== UNUSED;
      return answer ?? undefined;
    } catch (error) {
      if (!(error instanceof RunMissing)) throw error;
    } finally {
      if (!handedOver) {
        index?.close();
        fs.closeSync(fd);
      }
    }
  }
  return undefined;
}

/** DerivedFiles.findKeys and .candidates; with `keep`, the index stays open in the result for the writer's upkeep. */
export function loadThroughIndex<S>(
  path: string,
  root: string,
  spec: StoreSpec<S>,
  what: { keys: readonly string[] } | { query: IndexQuery },
  keep = false,
): Loaded<S> | undefined {
  return loadWith(path, root, spec, what, keep ? 'write' : 'read');
}

/**
 * As loadThroughIndex for a reader, touching nothing: undefined wherever a reader would write or report (a line
 * the index names that does not verify, an index behind the journal) as well as where there is no index that
 * verifies. `session get`'s own bundle reads so (journal/quick-read.ts), and hands anything else on.
 */
export function lookThroughIndex<S>(
  path: string,
  root: string,
  spec: StoreSpec<S>,
  what: { keys: readonly string[] } | { query: IndexQuery },
): Loaded<S> | undefined {
  return loadWith(path, root, spec, what, 'look');
}

function loadWith<S>(path: string, root: string, spec: StoreSpec<S>, what: { keys: readonly string[] } | { query: IndexQuery }, use: IndexUse) {
  return withIndex(path, root, spec, use, (index, fd): Loaded<S> | undefined | typeof UNUSED => {
    // The index trusts the journal it covers unread: past it, records no writer of it is writing (a writer killed
    // before its index append, a cache/ put back from a backup) leave that prefix unverified since, and a change
    // in it (a flipped bit) would change who matches and how many. A writer holds the lock (none other writes
    // now): it rebuilds by a verifying scan. A reader is told the gap (DataDir asks the lock); one that only looks
    // hands a query on (the entities a command names are read from their own lines, verified: the gap is theirs).
    if (index.gap > 0 && (use === 'write' || (use === 'look' && !('keys' in what)))) return UNUSED;
    // Far behind, a reader rebuilds it (DataDir): one that only looks hands that on.
    if (use === 'look' && index.behind) return UNUSED;
    const state = spec.initial();
    // A line the index names does not verify: the index or the journal is damaged. A replay tells which.
    if (!('keys' in what ? index.loadKeys(state, what.keys) : index.loadCandidates(state, what.query))) return undefined;
    const position = index.position();
    // The live estimate is the writer's (the upkeep's): a reader would look its keys up again for nothing.
    let upkeep: AppendUpkeep<S> | undefined;
    if (use === 'write') {
      const estimate = new LiveEstimate(index.live);
      if ('keys' in what) for (const key of what.keys) estimate.seed(key, index.linesOf(key));
      upkeep = new AppendUpkeep(index, spec, estimate, fd);
    }
    return { state, full: false, source: 'keys', damaged: false, ...position, records: position.lines, gap: index.gap, ...(upkeep && { index: upkeep }) };
  });
}

/** DerivedFiles.newest (`look`: as lookThroughIndex, for journal/quick-read.ts). */
export function loadNewest<S>(
  path: string,
  root: string,
  spec: StoreSpec<S>,
  query: NewestQuery,
  enough: (state: S) => boolean,
  use: 'read' | 'look' = 'read',
): { state: S; total: number | undefined; tornTail: TornTail | undefined; gap: number } | undefined {
  return withIndex(path, root, spec, use, (index) => {
    if (use === 'look' && index.gap > 0) return UNUSED;
    const state = spec.initial();
    const read = index.loadNewest(state, query, enough);
    return read && { state, total: read.total, tornTail: index.position().tornTail, gap: index.gap };
  });
}

/** DerivedFiles.tally. */
export function loadTally<S>(
  path: string,
  root: string,
  spec: StoreSpec<S>,
  from: number,
  to: number,
): { counts: number[][]; tornTail: TornTail | undefined; gap: number } | undefined {
  if (spec.tally === undefined) return undefined;
  return withIndex(path, root, spec, 'read', (index) => {
    const counts = index.tally(from, to);
    return counts && { counts, tornTail: index.position().tornTail, gap: index.gap };
  });
}

/**
 * Whether the index verifies and covers the whole journal: a reader that replayed (a whole list) then leaves it
 * as it is (DerivedFiles.keep); one that only looks (journal/quick-read.ts) answers only then.
 */
export function indexCoversJournal(path: string, root: string, spec: StoreSpec<unknown>): boolean {
  return withIndex(path, root, spec, 'look', (index) => index.gap === 0) === true;
}

/** DerivedFiles.prefix. */
export function loadPrefix<S>(
  path: string,
  root: string,
  spec: StoreSpec<S>,
  query: { index: string; prefix: string },
  enough: (state: S) => boolean,
): { state: S; tornTail: TornTail | undefined; gap: number } | undefined {
  return withIndex(path, root, spec, 'read', (index) => {
    const state = spec.initial();
    return index.loadPrefix(state, query, enough) ? { state, tornTail: index.position().tornTail, gap: index.gap } : undefined;
  });
}

/** DerivedFiles.keyRecords (IndexLookup.keyRecords), and the torn tail the read passed over. */
export function loadKeyRecords<S>(
  path: string,
  root: string,
  spec: StoreSpec<S>,
  key: string,
): { records: { record: JournalRecord; at: LinePosition }[]; tornTail: TornTail | undefined; gap: number } | undefined {
  return withIndex(path, root, spec, 'read', (index) => {
    const records = index.keyRecords(key);
    return records && { records, tornTail: index.position().tornTail, gap: index.gap };
  });
}
