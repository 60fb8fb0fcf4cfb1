// What a store declares to the journal layer: its file, its vocabulary, and how its records fold into state.
import type { EventDraft, JournalRecord } from './record';
import type { LinePosition } from './line';
import type { StoreKey } from '../../shared/store-key';

export interface StoreSpec<S> {
  /** The journal's file name in the data directory, e.g. `sessions.jsonl`. */
  readonly file: string;
  /** Every event name this journal may contain (SPEC §3: one declared vocabulary), and how each payload parses. */
  readonly vocabulary: Vocabulary;
  initial(): S;
  /** Applies one verified record. Must not throw on any payload: replay never throws on bad data. */
  evolve(state: S, record: JournalRecord, at: LinePosition): void;
  /** The events that rebuild the live state, for compaction. */
  live(state: S): EventDraft[];
  /**
   * The entity a record concerns (a session's stored id, a case id). With it the journal keeps a key index,
   * so that commands on one entity read only that entity's lines (Transaction.loadKey, DataDir.readKey):
   * evolve must then give the same entity whether it sees the whole journal or only that entity's records.
   */
  keyOf?(record: JournalRecord): string | undefined;
  /**
   * The record alone determines its entity (a whole new state, a deletion): evolve gives the same entity
   * from it on as from the key's first record, so reads through the key index start at the last such line.
   */
  resets?(record: JournalRecord): boolean;
  /**
   * Named secondary keys derived from an entity's folded state (with keyOf), kept in the store's index so
   * that queries by them (DataDir.readIndexed, Transaction.loadIndexed) read only the entities that may
   * match. A number is ordered (queried with `atMost`), a string is matched exactly (`equals`).
   */
  secondary?: SecondaryKeys<S>;
  /**
   * The words each entity is found by (with keyOf), for queries that read only the entities holding some of
   * them (JournalStore.readTerms): a database keeps each live entity's terms and facts as a row (a GIN index
   * over the terms), a data directory's snapshot keeps postings of its own.
   */
  terms?: TermKeys<S>;
  /** Bytes of journal the live state needs (an estimate), for stores without keyOf, to decide when compaction pays. */
  liveBytes?(state: S): number;
  /**
   * A compact encoding of the whole state, cached in cache/<file>.state so that whole-store queries (case
   * retrieve over 100k cases) decode it and replay only the records after it. A decoded state must accept
   * further records through evolve; it need not carry everything compaction needs (compaction replays).
   */
  snapshot?: SnapshotCodec<S>;
  /** The payload fields that lie sealed on an encrypted store (SPEC §13; codec/cipher.ts), and each record's entity. */
  sealed?: SealedFields;
  /** Records counted per hour of their `ts` and series, in the store's index with its key lines (derived/tally.ts). */
  tally?: TallyRule;
  /** A fold that needs little of each record (doctor's): a survey (core/check.ts) holds `keep`'s item of a record until its batch is whole, folds it by `evolve`, reports `finish`'s of the state. */
  kept?: { keep(record: JournalRecord, at: LinePosition): any; evolve(state: S, item: any, at: LinePosition): void; finish?(state: S): unknown };
}

/** The series a record counts in (an index into `series`), if any: renaming or reordering `series` rebuilds the index. */
export type TallyRule = { readonly series: readonly string[]; of(record: JournalRecord): number | undefined };

/**
 * What a store declares of its records' sealed fields: by event, each payload field sealed and the name of its place
 * (the same text keeps its place when compaction restates it in another event: an archive's `reason` is the
 * session's `archive_reason`); and the entity each record concerns.
 */
export interface SealedFields {
  readonly fields: Readonly<Record<string, Readonly<Record<string, string>>>>;
  entity(data: any): string;
  /**
   * Plain fields derived from the text with the store key (a case's word index as keyed hashes), set whenever the
   * text is sealed: `plain` is the payload with its text open; with `key` undefined (a store decrypted) the
   * derived fields are taken out. Answers the payload to seal (a copy when it changed anything).
   */
  derive?(plain: Record<string, unknown>, key: StoreKey | undefined): Record<string, unknown>;
}

export interface SecondaryKeys<S> {
  /** The names, in a fixed order; renaming, reordering or changing `values` needs a new `version`. */
  readonly names: readonly string[];
  readonly version: number;
  /**
   * The entity `key`'s value of each name, in `names` order, as `state` holds it (undefined: no value, or
   * no such entity). Numbers must be whole, from 0 to 2^53.
   */
  values(state: S, key: string): readonly (string | number | undefined)[];
  /**
   * Names whose string values are kept in order of their leading bytes rather than matched exactly, so that
   * they can be read by prefix (JournalStore.readPrefix); `equals` on one reads every value that shares its
   * first 7 bytes (UTF-16 order, as JS compares strings). A value that should read well by prefix starts
   * with its distinguishing part, and stays the entity's for its life (derived from its key): a read by
   * prefix takes every entry in the range as a candidate, and orders them by the value they carry.
   */
  readonly prefixed?: readonly string[];
  /**
   * For a prefixed name: the read by prefix that orders, past the kept bytes, the entities whose values share
   * the first `known` UTF-16 units of entity `key`'s value of `index` (a tie among many: a short prefix of ids
   * that share a long stem) — a range that holds every entity whose value starts with those units, in the order
   * of their values of `index` among themselves; undefined when there is none (the tie is read whole).
   */
  readonly deeper?: (index: string, key: string, known: number) => { index: string; prefix: string } | undefined;
  /**
   * For an ordered name whose ties the caller breaks by key: the read by prefix (of a prefixed name) that holds,
   * in key order, every entity whose value of `index` is `value` (and maybe others, which the index filters out),
   * so that a newest-first read whose limit falls in a large tie group reads it only as far as it needs;
   * undefined when there is none (the group is read whole).
   */
  readonly tied?: (index: string, value: number) => { index: string; prefix: string } | undefined;
}

export interface TermKeys<S> {
  /** Bumped whenever `entries` changes what it gives: rows of another version are not trusted. */
  readonly version: number;
  /**
   * The live entities `keys` (every live entity when undefined) as `state` holds them: each one's terms and
   * its facts (what a query over these entities needs of it, as one text the spec alone reads).
   */
  entries(state: S, keys?: readonly string[]): Iterable<TermEntry>;
  /**
   * What a database keeps counted as the rows change (JournalStore.countTerms, and a page's total): the entities by
   * the text of fact `fact`, in all, among those holding no term starting with `prefix`, and per such term.
   */
  readonly counted?: { readonly fact: number; readonly prefix: string };
  /**
   * A state holding exactly `hits`, for a query over `terms`: enough to answer it as the whole state would
   * (the postings of `terms` are the hits that hold them; every other entity holds none of them).
   */
  fromHits(terms: readonly string[], hits: readonly TermHit[]): S;
}

export interface TermEntry {
  readonly key: string;
  /** Distinct terms, sorted (by code unit). */
  readonly terms: readonly string[];
  readonly facts: string;
}

/** An entity holding at least one term of a query: which of the query's terms (indexes into them), and its facts. */
export interface TermHit {
  readonly key: string;
  readonly has: readonly number[];
  readonly facts: string;
}

/**
 * A query on a named secondary key (StoreSpec.secondary): entities whose value equals a string, or whose
 * numeric value is at most a number. An answer may hold more entities than match (the caller filters
 * exactly), never fewer.
 */
export type IndexQuery = { readonly index: string; readonly equals: string } | { readonly index: string; readonly atMost: number };

/**
 * A newest-first read of an ordered secondary key (JournalStore.readNewest): the entities whose value lies from
 * `atLeast` (inclusive; the key's least value when absent) to `atMost`, highest first; `count: false` when the
 * caller needs no total.
 */
export interface NewestQuery {
  readonly index: string;
  readonly atMost: number;
  readonly atLeast?: number | undefined;
  readonly count?: boolean | undefined;
}

export interface SnapshotCodec<S> {
  /** Bumped whenever the encoding changes: a snapshot of another version is ignored. */
  readonly version: number;
  encode(state: S): Uint8Array;
  /**
   * undefined when the bytes are not a snapshot this codec can read. The body is read on demand, page by
   * page, each page verified as it is read: a decoded state may read more of it later (a query reading the
   * postings of its terms), and such a read throws DerivedDamage when a page does not verify — the journal
   * layer then answers from a replay (DataDir.readWith).
   */
  decode(body: SnapshotBody): S | undefined;
  /**
   * The state's changes since it was decoded, kept beside the snapshot (cache/<file>.state-delta) so that the
   * records after a snapshot are verified and folded once, not by every reader: `encode` gives them as bytes
   * (undefined when it cannot), `apply` continues a state decoded just now with them, or answers false and
   * leaves it untouched when they do not fit it.
   */
  readonly delta?: {
    encode(state: S): Uint8Array | undefined;
    apply(state: S, bytes: Uint8Array): boolean;
  };
  /**
   * `encode` in bounded steps, so that no single write pays for rewriting a large snapshot (the data directory's
   * snapshot-build.ts; it needs `delta` too, to hand every step the same state: the snapshot and the changes
   * frozen when the rewrite began). `step` continues the body after `cursor` (undefined: from its start) with
   * about `budget` bytes read and written, and says the whole body's length (by the first step that gives bytes at the latest),
   * whether it is complete, and the cursor to continue from (plain JSON data). The bytes of all the steps,
   * in order, are exactly encode's. undefined when it cannot (the rewrite is given up).
   */
  readonly steps?: {
    step(state: S, cursor: unknown, budget: number): { bytes: Uint8Array; length: number | undefined; done: boolean; next: unknown } | undefined;
  };
  /**
   * A whole new body built from the journal's records streamed through it in bounded memory, spilling to
   * `scratch` (the first read after cache/ was lost: derived/snapshot-stream.ts), instead of a replay that holds
   * the whole state. Its bytes are exactly encode's of the state a replay of the records taken would fold.
   */
  readonly stream?: (scratch: Scratch) => SnapshotStream;
}

/**
 * The records of one verifying scan, through a streamed build (SnapshotCodec.stream). `keep` sees each record the
 * scan accepts (its payload parsed by the vocabulary: not to be parsed again) as it is read, before its batch is
 * known whole, and answers a number the scan holds for it; `take` is handed that
 * number once the batch is whole. Only what was kept up to the last record taken may count: the rest is a batch
 * that never completed (a torn tail).
 */
export interface SnapshotStream {
  keep(record: JournalRecord, at: LinePosition): number;
  take(kept: number): void;
  /** Once every record was taken: the body's length, and `write`, which gives each of its bytes once (at `at`; bytes not given are zeros). */
  finish(): { readonly length: number; write(put: (bytes: Uint8Array, at: number) => void): void };
}

/** Where a streamed build spills: files in cache/, unlinked as soon as they are open; a full disk throws (no snapshot is built). */
export interface Scratch {
  file(): ScratchFile;
  /** Entries of 8 words, read back sorted by their first `words` words (equals in the order pushed). */
  sort(words: 2 | 4): ScratchSort;
  /** The 56-bit hash (hi 24 bits, lo 32) that the journal layer keys entries by (cut to fewer bits in tests). */
  keyHash(text: string): [number, number];
}

export interface ScratchFile {
  readonly size: number;
  append(bytes: Uint8Array): void;
  /** Reads into `into` from `position`: the bytes read. */
  read(into: Uint8Array, position: number): number;
}

export interface ScratchSort {
  push(w0: number, w1: number, w2: number, w3: number, w4: number, w5: number, w6?: number, w7?: number): void;
  /** The merge of everything pushed: `words` and `index` name the current entry until `done`. Call once, after the last push. */
  merged(): { readonly words: Uint32Array<ArrayBufferLike>; readonly index: number; readonly done: boolean; next(): void };
}

/** A snapshot's body, read on demand from verified pages. */
export interface SnapshotBody {
  readonly length: number;
  /**
   * Bytes [offset, offset + length), never to be modified (often a view of a verified page); throws
   * DerivedDamage when a page of them does not verify.
   */
  read(offset: number, length: number): Buffer;
}

/**
 * A journal's declared vocabulary: the event names it may contain and, for a store whose events are a closed
 * union, why a record's payload does not parse as its event's. Every read verifies through it: an unknown
 * event or a payload that does not parse is a bad line (reported, skipped, counted), never a throw.
 */
export interface Vocabulary extends ReadonlySet<string> {
  payloadProblem?(record: JournalRecord): string | undefined;
}

/** Builds a vocabulary set from a list of names, refusing duplicates. */
export function declareVocabulary(names: readonly string[]): Vocabulary {
  const set = new Set(names);
  if (set.size !== names.length) throw new Error('duplicate event name in a vocabulary');
  return set;
}

/** A journal's name in reports: its file without `.jsonl`. */
export const journalName = (file: string): string => file.replace(/\.jsonl$/, '');

/** A store's events as a closed union, from a map of event name → payload type. */
export type EventOf<M> = { [K in keyof M & string]: { readonly ev: K; readonly data: M[K] } }[keyof M & string];
/** An event to append: the union, with who wrote it and (for compaction) its original time. */
export type DraftOf<M> = EventOf<M> & { readonly actor?: string | undefined; readonly ts?: string | undefined };
/** One parser per event name: the payload as its type, or why it does not parse. */
export type PayloadParsers<M> = { readonly [K in keyof M & string]: (data: any) => M[K] | string };

export interface DeclaredEvents<M> {
  /** Derived from the parsers: exactly the names of the union. */
  readonly vocabulary: Vocabulary;
  /** The record as its store's event, or why it is not one: payloads are parsed once, here. */
  parse(record: JournalRecord): EventOf<M> | string;
}

/** Declares a store's events: the vocabulary and the one parser every read folds through. */
export function declareEvents<M>(parsers: PayloadParsers<M>): DeclaredEvents<M> {
  const table = parsers as Record<string, (data: unknown) => unknown>;
  const parse = (record: JournalRecord): EventOf<M> | string => {
    const parser = Object.hasOwn(table, record.ev) ? table[record.ev] : undefined;
    if (parser === undefined) return `unknown event ${JSON.stringify(record.ev)}`;
    const data = record.data !== null && typeof record.data === 'object' && !Array.isArray(record.data) ? parser(record.data) : 'the payload is not an object';
    return typeof data === 'string' ? data : ({ ev: record.ev, data } as EventOf<M>);
  };
  const vocabulary: Vocabulary = Object.assign(declareVocabulary(Object.keys(table)), {
    payloadProblem: (record: JournalRecord) => {
      const event = parse(record);
      return typeof event === 'string' ? event : undefined;
    },
  });
  return { vocabulary, parse };
}

/** The default branch of an exhaustive switch over a store's events: a new event not handled does not compile. */
export function unhandledEvent(event: never): never {
  throw new Error(`unhandled event ${JSON.stringify(event)}`);
}
