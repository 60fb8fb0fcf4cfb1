// `crux doctor`'s report: its input, its findings and the document it prints (--json), and the small judgements of modes.
import type { StoreSpec } from '../journal/codec/store-spec';
import type { JournalStore, ServerFacts } from '../journal/core/store-boundary';
import type { Instant } from '../shared/time';
import type { ActorName, AgentName } from '../shared/ids';
import type { KeyRow } from './handoff/ledger';
import type { FreshnessThresholds } from './session/freshness';

/** An expired session still open this long after its expiry means nothing is reaping (cron runs every few minutes). */
export const REAP_GRACE_MS = 15 * 60_000;
/** How many stranded or overdue sessions the report lists by name (the counts are always complete). */
export const LIST_LIMIT = 50;

export type OptionSource = 'flag' | 'env' | 'none';
/** Where the data directory came from: --data-dir, CRUX_DATA_DIR, $XDG_DATA_HOME, or ~/.local/share. */
export type DataDirSource = 'flag' | 'env' | 'xdg' | 'default';
export type KeySource = 'file' | 'CRUX_HANDOFF_SECRET' | 'CRUX_MCP_HANDOFF_SECRET' | 'none';

export interface DoctorInput {
  readonly dir: JournalStore;
  readonly dataDirSource: DataDirSource;
  /** Why the store was chosen, in words (which flag or variable, and what it overrides). */
  readonly storeWhy?: string | undefined;
  readonly agent: AgentName | undefined;
  readonly agentSource: OptionSource;
  readonly actor: ActorName | undefined;
  readonly actorSource: OptionSource;
  readonly env: NodeJS.ProcessEnv;
  readonly now: Instant;
  readonly stores: readonly StoreSpec<any>[];
  readonly thresholds?: FreshnessThresholds;
}

export interface Finding {
  /** fault: a journal or the directory is damaged (exit 9); warning: needs a look; note: for the record. */
  readonly level: 'fault' | 'warning' | 'note';
  readonly code: string;
  readonly message: string;
}

export interface SessionBrief {
  readonly session_id: string;
  readonly agent: string | null;
  readonly status: string;
  readonly updated_at: string | null;
  readonly expires_at: string | null;
  readonly freshness: string;
}

export interface DoctorReport {
  readonly healthy: boolean;
  readonly checked_at: string;
  readonly data_dir: { path: string; source: DataDirSource; why: string | null; exists: boolean; mode: string | null; private: boolean | null };
  readonly identity: {
    agent: string | null;
    agent_source: OptionSource;
    actor: string | null;
    actor_source: OptionSource;
    /** How a session id is stored for this agent: `__agent_session::<agent>::<id>`, or `<id>` unscoped. */
    session_key: string;
    /** The agent's Ed25519 signing key (`crux handoff keygen`), when it has one here. */
    agent_key: { key_id: string; path: string } | null;
  };
  readonly handoff_key: {
    source: KeySource;
    fingerprint: string | null;
    file: { path: string; exists: boolean; mode: string | null; bytes: number | null; private: boolean | null };
    /** Sources that exist but are not used because one before them wins. */
    shadowed: KeySource[];
  };
  /** Encryption at rest (SPEC §13): the key id the store records (null: plain) and the one this invocation gave. */
  readonly encryption: { encrypted: boolean; key_id: string | null; key_given: string | null };
  /** The Ed25519 keyring (`handoff trust` / `untrust`): trusted and revoked keys with their fingerprints. */
  readonly keyring: KeyRow[];
  readonly journals: {
    name: string;
    file: string;
    exists: boolean;
    bytes: number;
    records: number;
    last_write: string | null;
    healthy: boolean;
    problems: { line: number; reason: string }[];
    torn_tail: boolean;
    quarantined: number;
    replay_ms: number;
    live_bytes: number | null;
    index: 'valid' | 'stale' | 'wrong' | 'absent' | 'unusable' | null;
  }[];
  readonly quarantine: { count: number; items: string[] };
  readonly sessions: {
    total: number;
    by_status: Record<string, number>;
    in_scope: number;
    unscoped: number;
    other_agents: number;
    stranded_count: number;
    stranded: SessionBrief[];
    overdue_reap_count: number;
    overdue_reap: SessionBrief[];
  };
  readonly lock: {
    held: boolean;
    /** Where the lock lives (the data directory's .lock/). */
    name: string | null;
    /** The holder (held), or the killed holder whose stale lock doctor found and recovered (stale). */
    holder: { pid: number; command: string; host?: string } | null;
    /** A killed holder's lock was found (and recovered, as any writer would); null: cannot be told here. */
    stale: boolean | null;
    /** How the lock works: `socket+link (procfd|chdir|direct)`; null without a data directory. */
    mechanism: string | null;
    /** The filesystem under the lock; not trusted: a holder on another host cannot be proved dead. */
    filesystem: { type: string; trusted: boolean } | null;
  };
  readonly other_files: string[];
  /** A PostgreSQL store's server, schema and schema version; null for a data directory. */
  readonly server: ServerFacts | null;
  readonly findings: Finding[];
}

export const octal = (mode: number | null) => (mode === null ? null : `0${mode.toString(8).padStart(3, '0')}`);
export const isPrivate = (mode: number | null) => (mode === null ? null : (mode & 0o077) === 0);
