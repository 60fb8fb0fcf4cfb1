// The store boundary: what a kind of store implements so that every command runs on it unchanged.
// (Over 300 lines: the whole contract of a kind of store — every interface and its rules — in one place.)
//
// A data directory (journal/data-dir.ts) is one kind; a PostgreSQL database (issue 15) is another. The domain
// sees only these interfaces: it never learns whether its records are lines in a file or rows in a table.
//
// The contract every implementation keeps (SPEC §3):
// - Records are the lines the record codec (record.ts) encodes, kept byte for byte: the same format version,
//   sequence, hash chain and batch marks, so `journal check` verifies any store the same way and
//   `journal copy` moves a store to another kind record for record.
// - Reads never throw on bad data: a record that does not verify is reported (Reporter, `file:line: reason`),
//   skipped, and counted; every other record still folds. An incomplete batch at the end (a killed writer) is
//   not folded at all.
// - A write runs under one exclusive lock per store (a lock file, an advisory lock): `decide` sees the state
//   as of the lock, and what it appends becomes visible all at once when `write` resolves, or not at all.
// - Failures of the environment are CruxErrors with their kind, never a bare Error: permission → invalid_input
//   (exit 5) naming the path or server; no space, quota, I/O error, lost connection, lock wait → 75.
import type { EventDraft, JournalRecord } from '../codec/record';
import type { LinePosition } from '../codec/line';
import type { ProgressSink } from '../codec/reporting';

export type { ProgressSink, Reporter } from '../codec/reporting';
import type { IndexQuery, NewestQuery, StoreSpec, TermHit } from '../codec/store-spec';
import type { TermCounts, TermRowsQuery } from '../codec/term-queries';
import type { HistoryReport } from './history';
import type { DerivedReport } from './line-store';
import type { RecordTransform, RewriteOptions, RewriteResult } from './rewrite';
import type { SecretTally } from './secret-survey';

/**
 * One write transaction, handed to `JournalStore.write`'s `decide` under the lock.
 *
 * Loads are asynchronous (a database answers over the network); appends are synchronous: they apply the
 * drafts to the loaded state at once (so the rest of `decide` sees them) and are made durable when `decide`
 * has returned, in the order of each store's first append. All of one call's drafts are one batch: after a
 * crash at any moment they are all visible or none is. If `decide` throws, nothing is written.
 */
export interface Transaction {
  /** The time every record of this transaction carries (RFC 3339). */
  readonly ts: string;
  /** The store's whole state as of the lock. */
  load<S>(spec: StoreSpec<S>): Promise<S>;
  /**
   * A state holding at least the entities `keys` (and maybe others), as of the lock. Load every key a
   * transaction touches before its first append to that store; after a load by key, a whole `load` of the
   * same store is refused (an implementation may answer either from an index or from a whole replay).
   */
  loadKey<S>(spec: StoreSpec<S>, ...keys: string[]): Promise<S>;
  /**
   * A state holding at least every entity that may match `query` on one of the store's declared secondary
   * keys (StoreSpec.secondary), as of the lock; it may hold others too — the caller filters exactly. Same
   * rules as loadKey (load before the first append; no whole load after it). See JournalStore.readIndexed.
   */
  loadIndexed<S>(spec: StoreSpec<S>, query: IndexQuery): Promise<S>;
  /**
   * A state that answers a query over `query.terms` as the whole state would, as of the lock (see
   * JournalStore.readTerms); it may be the whole state. Same rules as loadKey.
   */
  loadTerms<S>(spec: StoreSpec<S>, query: { readonly terms: readonly string[] }): Promise<S>;
  /**
   * Appends `drafts` to the store as one batch and applies them to its loaded state (loading it whole first
   * if it was not loaded). At most one append per store per transaction: give all of a store's drafts in one
   * call, so that they are one batch.
   */
  append<S>(spec: StoreSpec<S>, drafts: readonly EventDraft[]): void;
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
  /** The journal's history/ (what compactions dropped), when it has any: verified like the journal. */
  readonly history?: HistoryReport;
  /**
   * Derived rows (a database's index, snapshot) that disagree with a replay of the journal: each problem one line;
   * `rebuilt` after --repair. Absent when they agree (and on a data directory, whose caches are verified on read).
   */
  readonly derived?: DerivedReport;
}

export interface CompactReport {
  readonly name: string;
  readonly file: string;
  readonly before: { records: number; bytes: number };
  readonly after: { records: number; bytes: number };
}

/** What `crux doctor` learns of one journal: its check report and what the fold alone does not tell. */
export interface JournalFacts<S> extends Omit<JournalReport, 'repaired'> {
  /** The time of the newest record, and of the last record in the journal (they differ when time went backwards). */
  readonly newest_ts: string | null;
  readonly last_ts: string | null;
  /**
   * Records whose time is earlier than the newest before them by more than any lock wait explains
   * (policy.ts, CLOCK_STEP_TOLERANCE_MS): the writers' clocks (or CRUX_NOW) disagree.
   */
  readonly backwards: { count: number; first_line: number | null };
  /** The folded state, for the store's own health questions. */
  readonly state: S;
  /** An estimate of the bytes the live state needs, when the store or its index has one. */
  readonly live_bytes: number | null;
  /** Automatic compaction should have rewritten it by now (policy.ts: the same rule on every kind of store). */
  readonly compaction_due: boolean;
  /** When the journal was last compacted (its opening snapshot record's time), where the store tells it. */
  readonly compacted_at?: string | null;
  /**
   * The key index, a derived cache that must advance with the journal: valid, stale (rebuilt by the next
   * write), wrong (describes this journal but another chain head: a bug), absent, unusable (cache/ or the
   * file cannot be read, or is not a regular file: bypassed); null for a store (or a kind of store) without one.
   */
  readonly index: 'valid' | 'stale' | 'wrong' | 'absent' | 'unusable' | null;
}

/** What `crux doctor` reports of the store as a whole, gathered without changing anything. */
export interface StoreFacts {
  /** Where the store lives: a data directory's path (its mode) or a server. */
  readonly location: {
    readonly path: string;
    readonly exists: boolean;
    /** It exists and can hold journals (a directory, a reachable schema). */
    readonly usable: boolean;
    /** Permission bits of a directory; null elsewhere. */
    readonly mode: number | null;
  };
  /** The writers' lock: whether another process holds it right now, and who, when that can be seen. */
  readonly lock: {
    held: boolean;
    /** Where the lock lives (a data directory's .lock/), or null when there is none yet. */
    name: string | null;
    holder: { pid: number; command: string; host?: string } | null;
    /** A killed holder's lock was found (and taken over); null: cannot be told on this filesystem. */
    stale?: boolean | null;
    /** How the lock works here, e.g. `socket+link (procfd)`. */
    mechanism?: string;
    /** The filesystem under the lock, and whether a refused connection proves a holder dead on it. */
    filesystem?: { type: string; trusted: boolean };
  };
  /** One entry per spec asked for, in that order; empty when the store is not usable. */
  readonly journals: JournalFacts<any>[];
  /** Items kept in quarantine (bytes taken out of journals by repair), never deleted. */
  readonly quarantine: string[];
  /** Things in the store no spec declares (not checked). */
  readonly other_files: string[];
  /** Why the history compactions kept cannot be read (a data directory's history/: permission, I/O), if it cannot. */
  readonly history_unreadable?: string;
  /** A database store's server and schema; absent for a data directory. */
  readonly server?: ServerFacts;
}

/** What doctor reports of a database server: its version, the store's schema and the schema's version. */
export interface ServerFacts {
  readonly version: string;
  readonly schema: string;
  /** The schema's version (0: not created yet), and the version this crux writes. */
  readonly schema_version: number;
  readonly crux_schema_version: number;
  /** Each table of the schema: its size on disk (with its indexes) and the server's estimate of its rows. */
  readonly tables: { readonly name: string; readonly bytes: number; readonly rows: number }[];
  /** When a journal was last compacted (the time of its opening snapshot record), or null: never. */
  readonly last_compaction: string | null;
  /** Whether what the server acknowledges is replicated (SPEC §11, "Acknowledged means replicated"). */
  readonly replication?: ReplicationFacts;
}

/** What a commit the server acknowledges promises: on a standby too, or on this server alone. */
export interface ReplicationFacts {
  /** The server answering (`host:port`), a primary or a standby. */
  readonly server: string;
  readonly role: 'primary' | 'standby';
  readonly synchronous_commit: string;
  readonly synchronous_standby_names: string;
  /** pg_stat_replication: each standby streaming from this server; null members are hidden from this user (pg_monitor sees them). */
  readonly standbys: { readonly name: string; readonly state: string | null; readonly sync_state: string | null }[];
  /** On a standby: seconds since the primary committed the last transaction it replayed (null: none yet). */
  readonly replay_lag_seconds: number | null;
  /** A write acknowledged is on a standby too; false: on this server alone; null: cannot be told. */
  readonly replicated: boolean | null;
  /** The verdict in words. */
  readonly summary: string;
}

/** One piece of a journal's history: what one compaction dropped, named as history/ names its file. */
export interface HistoryPiece {
  /** `<journal>.<head seq, 12 digits>.jsonl` */
  readonly name: string;
  /** Its lines as stored, read as they are iterated (from a StoreView: only while that view is open, once). */
  readonly lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
}

/**
 * A consistent view of a store (JournalStore.readConsistent): each journal's lines and its history, as stored,
 * streamed (memory flat in their size): iterate one journal, or one history piece, to its end before the next.
 */
export interface StoreView {
  lines(file: string): AsyncIterable<Uint8Array>;
  history(file: string): Promise<HistoryPiece[]>;
}

/** What `crux store init` did (or, with --print, would do) to make a store ready ahead of its first write. */
export interface InitReport {
  readonly store: string;
  readonly kind: 'dir' | 'postgres';
  /** --print: nothing was changed, `created` is what would be. */
  readonly printed: boolean;
  /** What was created (with --print: what would be), outermost first; empty when the store was ready. */
  readonly created: string[];
  /** A database's schema version, after (with --print: as it is); null for a data directory. */
  readonly schema_version: number | null;
  /** With --print on PostgreSQL: the SQL script `store init` runs. */
  readonly sql?: string;
}

/** How a key item looks from outside, for `doctor` and messages. */
export interface KeyFacts {
  /** How messages name it (a path under keys/, or the table it sits in). */
  readonly path: string;
  /** Permission bits where they mean something (a file); null in a database. */
  readonly mode: number | null;
  readonly bytes: number;
}

/**
 * Key material: the handoff MAC key (`handoff.key`) and the agents' Ed25519 private keys
 * (`agent-<name>.ed25519.pem`). Names are flat (`[A-Za-z0-9._-]+`). Trusted public keys are records in the
 * handoff ledger, not key items.
 */
export interface KeyStore {
  /** How messages name the item `name` (e.g. `/data/keys/handoff.key`). */
  describe(name: string): string;
  /**
   * The item's bytes, or undefined when there is none. Refuses (exit 5) an item others could read (a file
   * with group or other bits) and anything that is not a plain item.
   */
  read(name: string): Promise<Uint8Array | undefined>;
  /**
   * Creates the item unless it exists, atomically and durably (never half-written); returns false when it
   * already existed (of two racing creators exactly one wins; the loser reads the winner's). On failure nothing
   * is left behind (no empty keys/ directory).
   */
  create(name: string, bytes: Uint8Array | string): Promise<boolean>;
  /** Whether the item exists, and its facts, without refusing or reading it. */
  stat(name: string): Promise<KeyFacts | undefined>;
  /** The bytes as stored without the exposure check (doctor's fingerprint of an exposed key); undefined if unreadable. */
  peek(name: string): Promise<Uint8Array | undefined>;
  /** Every item's name, sorted (for `journal copy`). */
  list(): Promise<string[]>;
}

/**
 * A kind of store. Everything a command does to its data goes through here: the domain's stores take a
 * JournalStore, never a concrete one.
 */
export interface JournalStore {
  /** Where the store is, for messages and `--json` (`data_dir`): a directory's path, a URL without password. */
  readonly location: string;
  readonly keys: KeyStore;

  /** The store's whole state, without the lock (a query). A store that does not exist yet is empty. */
  read<S>(spec: StoreSpec<S>): Promise<S>;
  /**
   * Runs `use` over the store's whole state, without the lock; the state is valid only while `use` runs.
   * Lets a data directory hand out a state that reads its snapshot on demand (a retrieve reads its terms'
   * postings, not the whole bank) and, should a derived page turn out damaged meanwhile, answer from a
   * replay instead. A store without such a state: `use(await this.read(spec))`.
   */
  readWith<S, T>(spec: StoreSpec<S>, use: (state: S) => T | Promise<T>): Promise<T>;
  /**
   * Runs `use` over a state that answers a query over `terms` as the whole state would, without the lock: at
   * least every entity holding one of `terms` (StoreSpec.terms) and, with `among`, holding every one of
   * `among` as well. A database reads only those entities' term rows (a GIN index), so that the cost follows
   * the candidates, not the store; a data directory (whose snapshot reads its terms' postings on demand) and a
   * store without term rows it can trust: `readWith`.
   */
  /**
   * Settles, before a read that derives what it looks for from the store key (a case retrieve's words as keyed
   * hashes, SPEC §13), whether the store is encrypted and with which key id. A data directory answers that from
   * its files as the cipher asks; a database reads its key-id row here. Absent: nothing to settle.
   */
  settleSealMode?(): Promise<void>;
  readTerms<S, T>(
    spec: StoreSpec<S>,
    query: { readonly terms: readonly string[]; readonly among?: readonly string[] },
    use: (state: S) => T | Promise<T>,
  ): Promise<T>;
  /** A state holding at least the entity `key`, without the lock. */
  readKey<S>(spec: StoreSpec<S>, key: string): Promise<S>;
  /**
   * A state holding at least every entity whose current value of the secondary key `query.index` matches
   * (`equals` a string; `atMost` a number), without the lock. It may hold entities that do not match (the
   * caller re-applies its exact filter), never miss one that does. The values come from
   * `spec.secondary.values(state, key)` on each entity's folded state, recomputed whenever the entity
   * changes; an entity without a value (undefined) is not indexed under that name.
   *
   * The cost must follow the answer, not the store: a data directory reads its index (derived/); a database
   * keeps the values in an indexed column per name (a b-tree on (store, name, value), strings compared
   * exactly, numbers in order) and reads the matching entities' rows. Without any index an implementation
   * may fold the whole store: the answer is the same.
   */
  readIndexed<S>(spec: StoreSpec<S>, query: IndexQuery): Promise<S>;
  /**
   * Optional (a limited list): a state holding, highest value first, the entities whose value of the ordered
   * secondary key `query.index` is at most `query.atMost`, at least until `enough(state)`, and how many match
   * in all (`total`, from the index, without reading them; undefined when it had to read everything). With
   * `count: false` the caller does not need `total` (a list cut short that says nothing of the rest): a store
   * may then leave it undefined and read only what it folds. The caller filters exactly and cuts, as after
   * readIndexed. A store without it: readIndexed and count.
   */
  readNewest?<S>(spec: StoreSpec<S>, query: NewestQuery, enough: (state: S) => boolean): Promise<{ state: S; total: number | undefined }>;
  /**
   * Optional (completion): a state holding, in the order of their values, the entities whose value of the
   * prefixed secondary key `query.index` (StoreSpec.secondary.prefixed) starts with `query.prefix`, at least
   * until `enough(state)`: a matching entity it leaves out sorts after every matching entity it holds. It may
   * hold entities that do not match (the caller filters exactly and cuts). A store without it: read and filter.
   */
  readPrefix?<S>(spec: StoreSpec<S>, query: { readonly index: string; readonly prefix: string }, enough: (state: S) => boolean): Promise<S>;
  /** Optional: StoreSpec.tally's counts of the hours `from` to `to`, `[hour - from][series]`; undefined: count otherwise. */
  readTally?(spec: StoreSpec<unknown>, from: number, to: number): Promise<number[][] | undefined>;
  /**
   * The records at these positions (as the store handed them to `evolve`); undefined where there is no
   * record any more (the journal was rewritten since).
   */
  readAt<S>(spec: StoreSpec<S>, positions: readonly LinePosition[]): Promise<(JournalRecord | undefined)[]>;
  /**
   * Optional (a limited list): a page of the live entities' term rows (StoreSpec.terms) from rows it can trust only,
   * else undefined (the caller reads the whole state). A database: an index over them, a cost that follows the page.
   */
  readTermRows?<S>(spec: StoreSpec<S>, query: TermRowsQuery): Promise<{ hits: TermHit[]; total: number | undefined } | undefined>;
  /** Optional (success by tag): TermCounts over the term rows it can trust, else undefined (see TermCounts). */
  countTerms?<S>(
    spec: StoreSpec<S>,
    query: { readonly prefix: string; readonly where: { readonly fact: number; readonly equals: string } },
  ): Promise<TermCounts | undefined>;
  /**
   * Runs `decide` as one write transaction under the lock (waiting at most CRUX_LOCK_TIMEOUT, then exit 75).
   * A store that does not exist yet is created only if `decide` appends: a refused command leaves no trace.
   * `decide` may run more than once (dry against empty stores first), so its side effects outside the
   * transaction (key creation) must be idempotent.
   */
  write<T>(decide: (tx: Transaction) => T | Promise<T>, ts: string): Promise<T>;

  /** Verifies every journal (format, hashes, chain, sequence, batches); with `repair`, quarantines bad records and re-chains the rest. */
  check(specs: readonly StoreSpec<unknown>[], opts: { repair: boolean; ts: string; progress?: ProgressSink; secrets?: SecretTally }): Promise<JournalReport[]>;
  /**
   * Rewrites every journal to its live records after a snapshot record naming the old head; keeps owner and
   * mode. The old records are kept as history (SPEC §3), pruned by retention; `dropHistory` deletes it all.
   */
  compact(specs: readonly StoreSpec<unknown>[], ts: string, progress?: ProgressSink, opts?: { dropHistory?: boolean }): Promise<CompactReport[]>;
  /**
   * Passes every record of each journal, its history too, through `transform` and re-chains what changed, every
   * quarantined item through `opts.quarantine`: all at once, all or nothing (core/rewrite.ts: `journal redact`,
   * `encrypt`, `rekey`). `dryRun`: reports and writes nothing.
   */
  rewrite(specs: readonly StoreSpec<unknown>[], ts: string, transform: RecordTransform, opts: RewriteOptions): Promise<RewriteResult>;
  /**
   * Every record the store's journal ever kept, oldest first: the history compactions kept, then the journal
   * (records a compaction wrote to restate history that is still at hand are passed over). Bad records are
   * reported and skipped. Only `session history` and `session get --at` call it. With `key`, a store may pass on
   * only the journal's records of that key (read by key through its index, verified; the others are not read).
   */
  readHistory<S>(spec: StoreSpec<S>, sink: (record: JournalRecord, at: LinePosition) => void, opts?: { key?: string }): Promise<void>;
  /** Doctor's facts: under the lock when it is free (so journals hold still), without it when a writer holds it. */
  survey(specs: readonly StoreSpec<unknown>[]): Promise<StoreFacts>;

  /**
   * Makes the store ready ahead of its first write (`crux store init`): a data directory and its lock (mode
   * 0700), a database's schema at this crux's version with every journal's table. Idempotent. With `print`,
   * changes nothing and reports what it would do (on PostgreSQL, the SQL).
   */
  init(opts: { print: boolean }): Promise<InitReport>;

  /**
   * Every line of journal `file` exactly as stored, in order, without the `\n` (an unterminated tail last, as
   * it is): what `journal copy --to` moves. A missing journal yields nothing.
   */
  rawLines(file: string): AsyncIterable<Uint8Array>;
  /**
   * Into a store where journal `file` is empty or absent: stores `lines` as that journal byte for byte, all at
   * once (nothing visible until the last is stored), and its history pieces (oldest first) as its history.
   * Refuses (exit 4) when the journal has records.
   */
  restore(file: string, lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, history?: readonly HistoryPiece[]): Promise<void>;
  /**
   * Runs `use` over one consistent view of the store, `journal copy`'s source: under the writers' lock (a data
   * directory), or in one read-only repeatable-read transaction (PostgreSQL), so that every journal and its
   * history are read as of one moment while writers go on (PostgreSQL) or wait (a data directory).
   */
  readConsistent<T>(use: (view: StoreView) => Promise<T>, opts?: { readOnly?: boolean }): Promise<T>;
}
