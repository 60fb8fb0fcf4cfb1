// One write transaction under the lock: load stores (whole, or by key), append, then keep the key index and
// compact a journal that has become mostly dead.
import { appendRecords } from './append';
import { EMPTY_HEAD, encodeRecords, type EventDraft, type JournalRecord } from './record';
import { dropIndex, entryFor, extendIndex, LiveEstimate, statJournal, writeIndex, type IndexEntry } from './key-index';
import { loadKeys, loadSnapshot, replayFull, type Loaded, type Reporter } from './load';
import { dropSnapshot, readSnapshotHeader, writeSnapshot } from './snapshot';
import type { LinePosition } from './scan';
import type { StoreSpec } from './store-spec';

/** A snapshot is refreshed by a single-entity write once this many bytes of records follow it. */
export const SNAPSHOT_TAIL_BYTES = 1024 * 1024;

/** Auto-compaction: a journal over this size whose live records need less than half of it is rewritten. */
export const COMPACT_MIN_BYTES = 256 * 1024;
export const COMPACT_MAX_LIVE_FRACTION = 0.5;

export interface Transaction {
  /** The time every record of this transaction carries. */
  readonly ts: string;
  /** The store's whole state, replayed under the lock. */
  load<S>(spec: StoreSpec<S>): S;
  /**
   * The store's state holding at least the entities `keys` (from the key index when it is valid, else a full
   * replay). Load every key a transaction touches before its first append to that store.
   */
  loadKey<S>(spec: StoreSpec<S>, ...keys: string[]): S;
  /** Durably appends events (one write, one fsync) and applies them to the loaded state. */
  append<S>(spec: StoreSpec<S>, drafts: readonly EventDraft[]): void;
}

/** What a transaction needs from its data directory. */
export interface TransactionHost {
  readonly root: string;
  readonly reporter: Reporter;
  path(file: string): string;
  compactLoaded<S>(spec: StoreSpec<S>, loaded: Loaded<S>, ts: string): unknown;
}

/** Applies freshly encoded records to a state, as replay would; returns their positions. */
export function applyEncoded<S>(spec: StoreSpec<S>, state: S, text: string, line: number, offset: number): { at: LinePosition; record: JournalRecord }[] {
  const applied: { at: LinePosition; record: JournalRecord }[] = [];
  for (const lineText of text.split('\n').slice(0, -1)) {
    line += 1;
    const length = Buffer.byteLength(lineText);
    const record = JSON.parse(lineText) as JournalRecord;
    const at = { line, offset, length };
    spec.evolve(state, record, at);
    applied.push({ at, record });
    offset += length + 1;
  }
  return applied;
}

/** Decides against empty stores without touching the disk: used before a data directory exists. */
export class DryTransaction implements Transaction {
  wrote = false;
  private readonly states = new Map<StoreSpec<any>, unknown>();
  constructor(readonly ts: string) {}
  load<S>(spec: StoreSpec<S>): S {
    if (!this.states.has(spec)) this.states.set(spec, spec.initial());
    return this.states.get(spec) as S;
  }
  loadKey<S>(spec: StoreSpec<S>): S {
    return this.load(spec);
  }
  append<S>(spec: StoreSpec<S>, drafts: readonly EventDraft[]): void {
    if (drafts.length === 0) return;
    this.wrote = true;
    applyEncoded(spec, this.load(spec), encodeRecords(EMPTY_HEAD, drafts, this.ts).text, 0, 0);
  }
}

export class LockedTransaction implements Transaction {
  private readonly loaded = new Map<StoreSpec<any>, Loaded<any>>();
  private readonly touched = new Set<StoreSpec<any>>();

  constructor(
    private readonly host: TransactionHost,
    readonly ts: string,
  ) {}

  load<S>(spec: StoreSpec<S>): S {
    const loaded = this.loaded.get(spec);
    if (loaded?.full) return loaded.state;
    if (loaded !== undefined) throw new Error(`${spec.file}: a whole load after a load by key in one transaction`);
    const path = this.host.path(spec.file);
    const whole = loadSnapshot(this.host.root, path, spec, { forWrite: true }) ?? replayFull(path, spec, this.host.reporter);
    this.loaded.set(spec, whole);
    return whole.state;
  }

  loadKey<S>(spec: StoreSpec<S>, ...keys: string[]): S {
    const loaded = this.loaded.get(spec);
    if (loaded?.full) return loaded.state;
    if (loaded !== undefined) throw new Error(`${spec.file}: load every key before the first append`);
    const byKey = loadKeys(this.host.root, this.host.path(spec.file), spec, keys);
    if (byKey === undefined) return this.load(spec);
    this.loaded.set(spec, byKey);
    return byKey.state;
  }

  append<S>(spec: StoreSpec<S>, drafts: readonly EventDraft[]): void {
    if (drafts.length === 0) return;
    if (!this.loaded.has(spec)) this.load(spec);
    const loaded = this.loaded.get(spec)! as Loaded<S>;
    const path = this.host.path(spec.file);
    const outcome = appendRecords({
      root: this.host.root,
      file: spec.file,
      path,
      head: loaded.head,
      drafts,
      ts: this.ts,
      expectedSize: loaded.bytes,
      tornTail: loaded.tornTail,
    });
    if (outcome.quarantined) {
      const torn = loaded.tornTail!;
      this.host.reporter.warn(
        `${path}: moved an unterminated tail of ${torn.length} bytes at offset ${torn.offset} (a write that never completed) to ${outcome.quarantined}`,
      );
    }
    // Apply what was written, so later steps of this transaction see it, and note it for the index.
    const { text } = encodeRecords(loaded.head, drafts, this.ts);
    const start = loaded.tornTail?.offset ?? loaded.bytes;
    const applied = applyEncoded(spec, loaded.state, text, loaded.lines - (loaded.tornTail ? 1 : 0), start);
    if (loaded.index !== undefined && spec.keyOf !== undefined) {
      const list = loaded.index.mode === 'extend' ? loaded.index.added : loaded.index.entries;
      for (const { at, record } of applied) {
        const entry = entryFor(spec, record, at);
        if (entry === undefined) continue;
        list.push(entry);
        loaded.index.estimate.add(entry.key, at.length);
      }
    }
    loaded.head = outcome.head;
    loaded.headAt = applied.at(-1)!.at;
    loaded.bytes = outcome.bytes;
    loaded.lines = applied.at(-1)!.at.line;
    loaded.records += applied.length;
    loaded.tornTail = undefined;
    this.touched.add(spec);
  }

  /** After the decision: keep the caches of every appended store, and compact where mostly dead. */
  finish(): void {
    for (const spec of this.touched) {
      const loaded = this.loaded.get(spec)!;
      if (loaded.damaged) {
        // No cache and no compaction over damage: every later command replays (and reports) it until
        // `journal check --repair` quarantines it.
        dropIndex(this.host.root, spec.file);
        dropSnapshot(this.host.root, spec.file);
        continue;
      }
      const live = loaded.index?.estimate.total ?? spec.liveBytes?.(loaded.state);
      if (loaded.bytes >= COMPACT_MIN_BYTES && live !== undefined && live <= loaded.bytes * COMPACT_MAX_LIVE_FRACTION) {
        // Compaction needs every record's payload: only a verifying replay gives it.
        const whole = loaded.source === 'replay' ? loaded : replayFull(this.host.path(spec.file), spec, this.host.reporter, { quiet: true });
        if (!whole.damaged) this.host.compactLoaded(spec, whole, this.ts);
        continue;
      }
      this.writeIndex(spec, loaded);
      this.keepSnapshot(spec, loaded);
    }
  }

  /**
   * A transaction that held the whole state writes a fresh snapshot; one that read a few entities refreshes
   * it only when the records after it have grown past SNAPSHOT_TAIL_BYTES, so readers replay a short tail.
   */
  private keepSnapshot<S>(spec: StoreSpec<S>, loaded: Loaded<S>): void {
    const codec = spec.snapshot;
    if (codec === undefined) return;
    let whole: Loaded<S> | undefined = loaded;
    if (!loaded.full) {
      const header = readSnapshotHeader(this.host.root, spec.file);
      if (header !== undefined && loaded.bytes - header.size < SNAPSHOT_TAIL_BYTES) return;
      const path = this.host.path(spec.file);
      whole = loadSnapshot(this.host.root, path, spec) ?? replayFull(path, spec, this.host.reporter, { quiet: true });
      if (whole.damaged) return;
    }
    writeStateSnapshot(this.host.root, spec, whole);
  }

  private writeIndex<S>(spec: StoreSpec<S>, loaded: Loaded<S>): void {
    const index = loaded.index;
    const stat = statJournal(this.host.path(spec.file));
    if (index === undefined || stat === undefined) return;
    const header = { ...stat, seq: loaded.head.seq, h: loaded.head.h, lines: loaded.lines, live: index.estimate.total };
    if (index.mode === 'extend') extendIndex(this.host.root, spec.file, header, index.added);
    else writeIndex(this.host.root, spec.file, header, index.entries);
  }
}

/** Index entries and live estimate for a freshly written journal text (after compaction or repair). */
export function indexText<S>(spec: StoreSpec<S>, text: string): { entries: IndexEntry[]; estimate: LiveEstimate; lines: number } {
  const entries: IndexEntry[] = [];
  const estimate = new LiveEstimate();
  let offset = 0;
  let line = 0;
  for (const lineText of text.split('\n').slice(0, -1)) {
    line += 1;
    const length = Buffer.byteLength(lineText);
    const entry = entryFor(spec, JSON.parse(lineText) as JournalRecord, { line, offset, length });
    if (entry !== undefined) {
      entries.push(entry);
      estimate.add(entry.key, length);
    }
    offset += length + 1;
  }
  return { entries, estimate, lines: line };
}

/** Writes the snapshot of a whole state that matches the journal as it is now on disk. */
export function writeStateSnapshot<S>(root: string, spec: StoreSpec<S>, loaded: Loaded<S>): void {
  const codec = spec.snapshot;
  const stat = statJournal(`${root}/${spec.file}`);
  if (codec === undefined || stat === undefined || stat.size !== loaded.bytes || loaded.tornTail !== undefined) return;
  const headAt = loaded.headAt;
  if (headAt === undefined && loaded.head.seq > 0) return;
  writeSnapshot(root, spec.file, {
    codec: codec.version,
    ...stat,
    seq: loaded.head.seq,
    h: loaded.head.h,
    lines: loaded.lines,
    head_offset: headAt?.offset ?? 0,
    head_length: headAt?.length ?? 0,
  }, codec.encode(loaded.state));
}
