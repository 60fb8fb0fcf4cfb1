// One write transaction under the lock: load stores (whole, or by key), append, then keep the key index and
// compact a journal that has become mostly dead.
import { appendRecords } from './append';
import { EMPTY_HEAD, encodeRecords, type EventDraft, type JournalRecord } from './record';
import { LiveEstimate, statJournal, extendIndex, writeIndex, type IndexEntry } from './key-index';
import { loadKeys, replayFull, type Loaded, type Reporter } from './load';
import type { LinePosition } from './scan';
import type { StoreSpec } from './store-spec';

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
    const replayed = replayFull(this.host.path(spec.file), spec, this.host.reporter);
    this.loaded.set(spec, replayed);
    return replayed.state;
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
        const key = spec.keyOf(record);
        if (key === undefined) continue;
        list.push({ key, ...at });
        loaded.index.estimate.add(key, at.length);
      }
    }
    loaded.head = outcome.head;
    loaded.bytes = outcome.bytes;
    loaded.lines = applied.at(-1)!.at.line;
    loaded.records += applied.length;
    loaded.tornTail = undefined;
    this.touched.add(spec);
  }

  /** After the decision: write the key index of every appended store, and compact where mostly dead. */
  finish(): void {
    for (const spec of this.touched) {
      const loaded = this.loaded.get(spec)!;
      const live = loaded.index?.estimate.total ?? spec.liveBytes?.(loaded.state);
      if (loaded.bytes >= COMPACT_MIN_BYTES && live !== undefined && live <= loaded.bytes * COMPACT_MAX_LIVE_FRACTION) {
        const whole = loaded.full ? loaded : replayFull(this.host.path(spec.file), spec, this.host.reporter, { quiet: true });
        this.host.compactLoaded(spec, whole, this.ts);
        continue;
      }
      this.writeIndex(spec, loaded);
    }
  }

  private writeIndex<S>(spec: StoreSpec<S>, loaded: Loaded<S>): void {
    const index = loaded.index;
    const stat = statJournal(this.host.path(spec.file));
    if (index === undefined || stat === undefined) return;
    const header = { v: 1, ...stat, seq: loaded.head.seq, h: loaded.head.h, lines: loaded.lines, live: index.estimate.total };
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
    const key = spec.keyOf?.(JSON.parse(lineText) as JournalRecord);
    if (key !== undefined) {
      entries.push({ key, line, offset, length });
      estimate.add(key, length);
    }
    offset += length + 1;
  }
  return { entries, estimate, lines: line };
}
