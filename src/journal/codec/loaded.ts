// What a load hands a transaction and the derived layer: a store's state, where its journal ends, and how
// its index is kept in step after an append. Types and one constructor, so that load.ts and derived/ both build
// on them.
import type { ChainHead, JournalRecord } from './record';
import type { LinePosition, ScanResult, TornTail } from './scan';

export type { Reporter, WorkPhase } from './reporting';

/**
 * Where a loaded journal ends (a transaction appends after it): `bytes` and `lines` count an unterminated
 * tail, if there is one (the next append quarantines it).
 */
export interface Position {
  readonly head: ChainHead;
  readonly headAt?: LinePosition | undefined;
  readonly bytes: number;
  readonly lines: number;
  readonly tornTail: TornTail | undefined;
}

/** How the store's index follows a transaction's appends (derived/ implements it; nothing else looks inside). */
export interface IndexUpkeep {
  /** Notes a record the transaction appended at `at`. */
  appended(record: JournalRecord, at: LinePosition): void;
  /** The live-bytes estimate of the journal, these appends included (compaction's trigger). */
  readonly live: number;
  /** Closes what the load kept open for the appends (an index). */
  release(): void;
}

/** A store's state as a transaction holds it, with what appending and re-indexing need. */
export interface Loaded<S> {
  state: S;
  /** True when the state holds every entity; false when only the keys asked for. */
  full: boolean;
  /** How it was loaded: a verifying replay, an entity's lines, or a snapshot and the records after it. */
  source: 'replay' | 'keys' | 'snapshot';
  head: ChainHead;
  /** Where the head record's line is (for the bindings of derived files). */
  headAt?: LinePosition | undefined;
  bytes: number;
  lines: number;
  records: number;
  tornTail: ScanResult['tornTail'];
  /** Lines that failed verification (a torn tail aside): caches are not written over a damaged journal. */
  damaged: boolean;
  scan?: ScanResult;
  /** The size of journal the snapshot this state was decoded from covers (snapshot loads). */
  snapshotAt?: number;
  /** That snapshot's nonce, and how many records were folded from the journal past it and its delta. */
  snapshotNonce?: number;
  foldedPast?: number;
  /** Read through an index: journal bytes past what its files cover (their prefix trusted unread: DataDir). */
  gap?: number;
  /** How the store's index is kept after writes (absent for a store without keys). */
  index?: IndexUpkeep;
  /** Closes the snapshot a state read on demand keeps open (a lazy snapshot load); absent or a no-op otherwise. */
  release?(): void;
}

/** A whole state loaded up to where `at` (a scan, or a snapshot's binding) says the journal ends. */
export const loadedAt = <S>(
  state: S,
  source: Loaded<S>['source'],
  at: Pick<ScanResult, 'head' | 'headAt' | 'bytes' | 'lines' | 'records' | 'tornTail'>,
  damaged = false,
): Loaded<S> => ({
  state,
  full: true,
  source,
  damaged,
  head: at.head,
  headAt: at.headAt,
  bytes: at.bytes,
  lines: at.lines,
  records: at.records,
  tornTail: at.tornTail,
});
