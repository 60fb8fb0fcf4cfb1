// The journal layer's front door: reads replay a store's journal; writes run inside the lock as one transaction.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { acquireLock } from './lock';
import { appendRecords } from './append';
import { ensurePrivateDir, FILE_MODE, fsyncDir } from './durable-fs';
import { scanJournal, SNAPSHOT_EVENT, type LinePosition, type ScanResult } from './scan';
import { EMPTY_HEAD, encodeRecords, type ChainHead, type EventDraft, type JournalRecord } from './record';
import { replaceJournal, sweepStrayTemps } from './rewrite';
import { listQuarantine, quarantineBytes } from './quarantine';
import type { StoreSpec } from './store-spec';

export const LOCK_FILE = '.lock';
/** Auto-compaction: a journal over this size whose live records need less than half of it is rewritten. */
export const COMPACT_MIN_BYTES = 256 * 1024;
export const COMPACT_MAX_LIVE_FRACTION = 0.5;

export interface Reporter {
  warn(message: string): void;
}

/** Told after each record of a long check or compact: the journal file, bytes done and its size (for a progress line). */
export type ProgressSink = (file: string, doneBytes: number, totalBytes: number) => void;

export interface Transaction {
  /** The time every record of this transaction carries. */
  readonly ts: string;
  /** The store's state, replayed under the lock. */
  load<S>(spec: StoreSpec<S>): S;
  /** Durably appends events to a loaded store and applies them to its state. */
  append<S>(spec: StoreSpec<S>, drafts: readonly EventDraft[]): void;
}

interface Loaded<S> {
  state: S;
  scan: ScanResult;
  head: ChainHead;
  bytes: number;
  lines: number;
  tornTail: ScanResult['tornTail'];
}

export interface JournalReport {
  readonly name: string;
  readonly file: string;
  readonly exists: boolean;
  readonly records: number;
  readonly bytes: number;
  readonly problems: { line: number; reason: string }[];
  readonly torn_tail: boolean;
  readonly quarantined: number;
  readonly replay_ms: number;
  readonly repaired?: { removed: number; quarantine: string[] };
}

export interface CompactReport {
  readonly name: string;
  readonly file: string;
  readonly before: { records: number; bytes: number };
  readonly after: { records: number; bytes: number };
}

const journalName = (file: string) => file.replace(/\.jsonl$/, '');

export class DataDir {
  constructor(
    readonly root: string,
    readonly reporter: Reporter,
    private readonly lockTimeoutMs: number,
  ) {}

  exists(): boolean {
    return fs.existsSync(this.root);
  }

  path(file: string): string {
    return join(this.root, file);
  }

  /** Replays a store without the lock, for queries. A missing directory or file is an empty store. */
  read<S>(spec: StoreSpec<S>): S {
    return this.replay(spec).state;
  }

  /**
   * Runs `decide` as one write transaction under the lock. Against a directory that does not exist yet,
   * `decide` first runs against empty stores without creating anything: a refused command leaves no trace.
   */
  async write<T>(decide: (tx: Transaction) => T, ts: string): Promise<T> {
    if (!this.exists()) {
      const dry = new DryTransaction(ts);
      const result = decide(dry);
      if (!dry.wrote) return result;
      this.create();
    }
    const lock = await acquireLock(this.root, this.lockTimeoutMs);
    try {
      const tx = new LockedTransaction(this, ts);
      const result = decide(tx);
      tx.compactWhereDead();
      return result;
    } finally {
      await lock.release();
    }
  }

  /** Runs `fn` under the lock if the directory exists (for check, compact, repair). */
  async withLock<T>(fn: () => T, ifAbsent: () => T): Promise<T> {
    if (!this.exists()) return ifAbsent();
    const lock = await acquireLock(this.root, this.lockTimeoutMs);
    try {
      return fn();
    } finally {
      await lock.release();
    }
  }

  /** Verifies every journal; with `repair`, quarantines bad lines and torn tails and re-chains the rest. */
  async check(specs: readonly StoreSpec<unknown>[], opts: { repair: boolean; ts: string; progress?: ProgressSink }): Promise<JournalReport[]> {
    const run = () => specs.map((spec) => this.checkOne(spec, opts));
    return this.withLock(run, run);
  }

  /** Rewrites every journal to its live records, after a snapshot record naming the old head. */
  async compact(specs: readonly StoreSpec<unknown>[], ts: string, progress?: ProgressSink): Promise<CompactReport[]> {
    return this.withLock(
      () => specs.map((spec) => this.compactOne(spec, this.replay(spec, { quiet: true, progress }), ts)),
      () => specs.map((spec) => ({ name: journalName(spec.file), file: spec.file, before: { records: 0, bytes: 0 }, after: { records: 0, bytes: 0 } })),
    );
  }

  private create(): void {
    ensurePrivateDir(this.root);
    const lockPath = this.path(LOCK_FILE);
    if (!fs.existsSync(lockPath)) {
      fs.closeSync(fs.openSync(lockPath, 'a', FILE_MODE));
      fsyncDir(this.root);
    }
  }

  replay<S>(spec: StoreSpec<S>, opts: { quiet?: boolean; progress?: ProgressSink | undefined } = {}): Loaded<S> {
    const state = spec.initial();
    const path = this.path(spec.file);
    const progress = opts.progress === undefined ? undefined : withTotal(opts.progress, spec.file, path);
    const scan = scanJournal(path, spec.vocabulary, progress === undefined
      ? (record, at) => spec.evolve(state, record, at)
      : (record, at) => {
          spec.evolve(state, record, at);
          progress(at);
        });
    if (!opts.quiet) {
      for (const problem of scan.problems) {
        // A torn tail is the last write of a killed process: the next write quarantines it.
        if (problem.offset === scan.tornTail?.offset) continue;
        this.reporter.warn(`${path}:${problem.line}: ${problem.reason} (run \`crux journal check\`)`);
      }
    }
    return { state, scan, head: scan.head, bytes: scan.bytes, lines: scan.lines, tornTail: scan.tornTail };
  }

  compactOne<S>(spec: StoreSpec<S>, loaded: Loaded<S>, ts: string): CompactReport {
    const name = journalName(spec.file);
    const before = { records: loaded.scan.records, bytes: loaded.bytes };
    if (!loaded.scan.exists) return { name, file: spec.file, before, after: before };
    sweepStrayTemps(this.root, spec.file, ts);
    if (loaded.tornTail !== undefined) {
      const tail = readRange(this.path(spec.file), loaded.tornTail.offset, loaded.tornTail.length);
      quarantineBytes(this.root, spec.file, `tail-at-${loaded.tornTail.offset}`, tail, ts);
    }
    const live = spec.live(loaded.state);
    const snapshot: EventDraft = {
      ev: SNAPSHOT_EVENT,
      data: { previous_head: loaded.head, records_before: before.records, bytes_before: before.bytes },
    };
    const { text } = encodeRecords(loaded.head, [snapshot, ...live], ts);
    const bytes = replaceJournal(this.root, spec.file, text);
    return { name, file: spec.file, before, after: { records: live.length + 1, bytes } };
  }

  private checkOne(spec: StoreSpec<unknown>, opts: { repair: boolean; ts: string; progress?: ProgressSink }): JournalReport {
    const kept: { record: JournalRecord; at: LinePosition }[] = [];
    const progress = opts.progress === undefined ? undefined : withTotal(opts.progress, spec.file, this.path(spec.file));
    const scan = scanJournal(this.path(spec.file), spec.vocabulary, (record, at) => {
      progress?.(at);
      if (opts.repair) kept.push({ record, at });
    });
    const base = {
      name: journalName(spec.file),
      file: spec.file,
      exists: scan.exists,
      records: scan.records,
      bytes: scan.bytes,
      problems: scan.problems.map(({ line, reason }) => ({ line, reason })),
      torn_tail: scan.tornTail !== undefined,
      replay_ms: Math.round(scan.ms * 10) / 10,
    };
    if (!opts.repair || scan.problems.length === 0) {
      return { ...base, quarantined: listQuarantine(this.root, spec.file).length };
    }
    const quarantine = this.repair(spec.file, scan, kept, opts.ts);
    const removed = scan.problems.filter((p) => p.skipped).length;
    return { ...base, quarantined: listQuarantine(this.root, spec.file).length, repaired: { removed, quarantine } };
  }

  private repair(file: string, scan: ScanResult, kept: { record: JournalRecord }[], ts: string): string[] {
    const path = this.path(file);
    const original = fs.readFileSync(path);
    const removed = scan.problems.filter((p) => p.skipped).map((p) => {
      const bytes = original.subarray(p.offset, p.offset + p.length);
      return JSON.stringify({ line: p.line, offset: p.offset, reason: p.reason, bytes_b64: bytes.toString('base64') });
    });
    const quarantine = [quarantineBytes(this.root, file, 'before-repair', original, ts)];
    if (removed.length > 0) quarantine.push(quarantineBytes(this.root, file, 'removed-lines.jsonl', `${removed.join('\n')}\n`, ts));
    // Re-chain what verified, in sequence order, once each: repairs reordered and duplicated lines too.
    const seen = new Set<string>();
    const ordered = kept
      .map((k) => k.record)
      .sort((a, b) => a.seq - b.seq)
      .filter((r) => !seen.has(r.h) && seen.add(r.h));
    const firstSnapshot = ordered[0]?.ev === SNAPSHOT_EVENT ? ordered[0] : undefined;
    const start: ChainHead = firstSnapshot?.data?.previous_head ?? EMPTY_HEAD;
    const drafts = ordered.map((r) => ({ ev: r.ev, data: r.data, actor: r.actor, ts: r.ts }));
    replaceJournal(this.root, file, encodeRecords(start, drafts, ts).text);
    return quarantine;
  }
}

function withTotal(sink: ProgressSink, file: string, path: string): (at: LinePosition) => void {
  let total = 0;
  try {
    total = fs.statSync(path).size;
  } catch {
    // A missing journal has no records, so the sink is never called.
  }
  return (at) => sink(file, at.offset + at.length + 1, total);
}

function readRange(path: string, offset: number, length: number): Buffer {
  const fd = fs.openSync(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    fs.readSync(fd, buf, 0, length, offset);
    return buf;
  } finally {
    fs.closeSync(fd);
  }
}

/** Applies freshly encoded records to a state, as replay would have; returns the position after them. */
function applyEncoded<S>(spec: StoreSpec<S>, state: S, text: string, line: number, offset: number): { line: number; offset: number } {
  for (const lineText of text.split('\n').slice(0, -1)) {
    line += 1;
    const length = Buffer.byteLength(lineText);
    spec.evolve(state, JSON.parse(lineText) as JournalRecord, { line, offset, length });
    offset += length + 1;
  }
  return { line, offset };
}

/** Decides against empty stores without touching the disk: used before a data directory exists. */
class DryTransaction implements Transaction {
  wrote = false;
  private readonly states = new Map<StoreSpec<any>, unknown>();
  constructor(readonly ts: string) {}
  load<S>(spec: StoreSpec<S>): S {
    if (!this.states.has(spec)) this.states.set(spec, spec.initial());
    return this.states.get(spec) as S;
  }
  append<S>(spec: StoreSpec<S>, drafts: readonly EventDraft[]): void {
    if (drafts.length === 0) return;
    this.wrote = true;
    applyEncoded(spec, this.load(spec), encodeRecords(EMPTY_HEAD, drafts, this.ts).text, 0, 0);
  }
}

class LockedTransaction implements Transaction {
  private readonly loaded = new Map<StoreSpec<any>, Loaded<any>>();
  private readonly touched = new Set<StoreSpec<any>>();

  constructor(
    private readonly dir: DataDir,
    readonly ts: string,
  ) {}

  load<S>(spec: StoreSpec<S>): S {
    let loaded = this.loaded.get(spec);
    if (loaded === undefined) {
      loaded = this.dir.replay(spec);
      this.loaded.set(spec, loaded);
    }
    return loaded.state;
  }

  append<S>(spec: StoreSpec<S>, drafts: readonly EventDraft[]): void {
    if (drafts.length === 0) return;
    this.load(spec);
    const loaded = this.loaded.get(spec)!;
    const outcome = appendRecords({
      root: this.dir.root,
      file: spec.file,
      path: this.dir.path(spec.file),
      head: loaded.head,
      drafts,
      ts: this.ts,
      expectedSize: loaded.bytes,
      tornTail: loaded.tornTail,
    });
    if (outcome.quarantined) {
      const torn = loaded.tornTail!;
      this.dir.reporter.warn(
        `${this.dir.path(spec.file)}: moved an unterminated tail of ${torn.length} bytes at offset ${torn.offset} (a write that never completed) to ${outcome.quarantined}`,
      );
    }
    // Apply what was written, so later steps of this transaction see it.
    const { text } = encodeRecords(loaded.head, drafts, this.ts);
    const { line } = applyEncoded(spec, loaded.state, text, loaded.lines - (loaded.tornTail ? 1 : 0), loaded.tornTail?.offset ?? loaded.bytes);
    loaded.head = outcome.head;
    loaded.bytes = outcome.bytes;
    loaded.lines = line;
    loaded.tornTail = undefined;
    this.touched.add(spec);
  }

  /** Auto-compaction: rewrite a journal that is large and mostly dead (thresholds above). */
  compactWhereDead(): void {
    for (const spec of this.touched) {
      const loaded = this.loaded.get(spec)!;
      if (loaded.bytes < COMPACT_MIN_BYTES) continue;
      if (spec.liveBytes(loaded.state) > loaded.bytes * COMPACT_MAX_LIVE_FRACTION) continue;
      this.dir.compactOne(spec, { ...loaded, scan: { ...loaded.scan, records: loaded.lines } }, this.ts);
    }
  }
}
