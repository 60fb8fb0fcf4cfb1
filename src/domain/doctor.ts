// `crux doctor`: gathers what an operator checks at 3 am and judges it — including whether derived state advances.
//
// The second seed's lesson: a health report that only checks that the newest record parses reports health while
// nothing advances. So besides damage, the doctor asks the questions that catch a stuck pipeline: are expired
// sessions being reaped, do record times move forward, did auto-compaction keep up, are sessions stranded.
import { blake3 } from '@noble/hashes/blake3.js';
import type { StoreSpec } from '../journal/store-spec';
import type { JournalFacts, JournalStore, ServerFacts } from '../journal/store-boundary';
import { formatTime, tryParseTime, type Instant } from '../shared/time';
import type { ActorName, AgentName, ScopedSessionId } from '../shared/ids';
import { unscopeSessionId } from '../shared/ids';
import { deriveCompatKey, deriveKeyFromSecret, KEY_BYTES } from './handoff/crypto';
import { HANDOFF_KEY, HANDOFF_KEY_FILE, loadAgentKey } from './handoff/keys';
import { HANDOFF_STORE, keyRows, type KeyRow, type Ledger } from './handoff/ledger';
import { DEFAULT_THRESHOLDS, type FreshnessThresholds } from './session/freshness';
import { SESSION_STORE, type Sessions } from './session/fold';
import { viewSession } from './session/view';

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

const octal = (mode: number | null) => (mode === null ? null : `0${mode.toString(8).padStart(3, '0')}`);
const isPrivate = (mode: number | null) => (mode === null ? null : (mode & 0o077) === 0);
const fingerprintOf = (key: Uint8Array) => Buffer.from(blake3(key)).toString('hex').slice(0, 16);

export async function gatherDoctor(input: DoctorInput): Promise<DoctorReport> {
  const { dir, now } = input;
  const findings: Finding[] = [];
  // The store surveys under the lock when it is free, so that the journals hold still.
  const facts = await dir.survey(input.stores);
  const root = facts.location;
  const { usable } = root;
  const server = facts.server;
  if (server !== undefined && server.schema_version > server.crux_schema_version) {
    findings.push({ level: 'fault', code: 'schema_newer', message: `the schema ${server.schema} is at version ${server.schema_version}, newer than this crux writes (${server.crux_schema_version}): upgrade crux` });
  } else if (root.exists && !usable) {
    findings.push({ level: 'fault', code: 'data_dir_not_directory', message: `${root.path} exists but is not a directory` });
  } else if (!root.exists) {
    const created = server === undefined ? 'the first write creates it, mode 0700' : `the first write creates the schema ${server.schema}`;
    findings.push({ level: 'note', code: 'data_dir_absent', message: `${root.path} does not exist yet: nothing has been written (${created})` });
  } else if (root.mode !== null && !isPrivate(root.mode)) {
    findings.push({ level: 'warning', code: 'data_dir_exposed', message: `${root.path} is mode ${octal(root.mode)}: group or others can reach it (chmod 700)` });
  }
  const surveys: JournalFacts<any>[] = facts.journals;
  const lockProbe = facts.lock;
  const holder = lockProbe.holder;
  const who = holder ? `pid ${holder.pid} (${shortCommand(holder.command)})` : 'another process';
  if (lockProbe.held) {
    findings.push({ level: 'note', code: 'lock_held', message: `the writers' lock is held right now by ${who}; the journals were read without it` });
  }
  if (lockProbe.stale === true) {
    findings.push({ level: 'note', code: 'lock_stale', message: `the writers' lock was left by ${who}, which was killed; doctor recovered it (any writer would have, at once)` });
  }
  if (lockProbe.filesystem?.trusted === false) {
    findings.push({
      level: 'warning',
      code: 'lock_untrusted',
      message: `${root.path} is on ${lockProbe.filesystem.type}: the lock cannot be trusted there (a holder on another host cannot be proved dead), so a writer killed elsewhere blocks every other (exit 75) until its lock is removed by hand${lockProbe.held && lockProbe.stale === null ? `; held now by ${who}, alive or not` : ''}`,
    });
  }

  const journals = input.stores.map((spec, i) => judgeJournal(spec, surveys[i], now, input.thresholds ?? DEFAULT_THRESHOLDS, findings));
  const handoffIndex = input.stores.indexOf(HANDOFF_STORE);
  const ledger = handoffIndex >= 0 ? (surveys[handoffIndex]?.state as Ledger | undefined) : undefined;
  const sessionIndex = input.stores.indexOf(SESSION_STORE);
  const sessions = judgeSessions(sessionIndex >= 0 ? (surveys[sessionIndex]?.state as Sessions | undefined) : undefined, input, findings);

  const quarantineItems = facts.quarantine;
  if (quarantineItems.length > 0) {
    findings.push({
      level: 'note',
      code: 'quarantine',
      message: `${quarantineItems.length} item(s) in ${root.path}/quarantine: bytes taken out of journals, kept for you to inspect (crux never deletes them)`,
    });
  }
  const other = facts.other_files;
  if (other.length > 0) {
    findings.push({ level: 'note', code: 'other_files', message: `not checked (no store declares them): ${other.join(', ')}` });
  }
  const key = await judgeKey(input, usable, findings);

  return {
    healthy: !findings.some((f) => f.level === 'fault'),
    checked_at: formatTime(now),
    data_dir: { path: root.path, source: input.dataDirSource, why: input.storeWhy ?? null, exists: root.exists, mode: octal(root.mode), private: isPrivate(root.mode) },
    identity: {
      agent: input.agent ?? null,
      agent_source: input.agentSource,
      actor: input.actor ?? null,
      actor_source: input.actorSource,
      session_key: input.agent === undefined ? '<id>' : `__agent_session::${input.agent}::<id>`,
      agent_key: usable && input.agent !== undefined ? await agentKeyOf(dir, input.agent, findings) : null,
    },
    handoff_key: key,
    keyring: ledger === undefined ? [] : keyRows(ledger),
    journals,
    quarantine: { count: quarantineItems.length, items: quarantineItems },
    sessions,
    lock: {
      held: lockProbe.held,
      name: lockProbe.name,
      holder: lockProbe.holder,
      stale: lockProbe.stale === undefined ? false : lockProbe.stale,
      mechanism: lockProbe.mechanism ?? null,
      filesystem: lockProbe.filesystem ?? null,
    },
    other_files: other,
    server: server ?? null,
    findings: sortFindings(findings),
  };
}

function judgeJournal(
  spec: StoreSpec<any>,
  facts: JournalFacts<any> | undefined,
  now: Instant,
  thresholds: FreshnessThresholds,
  findings: Finding[],
): DoctorReport['journals'][number] {
  const name = spec.file.replace(/\.jsonl$/, '');
  if (facts === undefined || !facts.exists) {
    return { name, file: spec.file, exists: false, bytes: 0, records: 0, last_write: null, healthy: true, problems: [], torn_tail: false, quarantined: facts?.quarantined ?? 0, replay_ms: 0, live_bytes: null, index: null };
  }
  const { problems } = facts;
  if (problems.length > 0) {
    const first = problems[0]!;
    findings.push({
      level: 'fault',
      code: 'journal_damaged',
      message: `${spec.file}: ${problems.length} problem(s), first at line ${first.line}: ${first.reason} (\`crux journal check\` lists them; \`--repair\` quarantines them)`,
    });
  }
  if (facts.backwards.count > 0) {
    findings.push({
      level: 'warning',
      code: 'time_backwards',
      message: `${spec.file}: record times go backwards by more than a minute ${facts.backwards.count} time(s), first at line ${facts.backwards.first_line} (more than any lock wait explains): writers disagree about the clock (or CRUX_NOW was set), so freshness and expiry are judged from the wrong times`,
    });
  }
  const newest = tryParseTime(facts.newest_ts);
  if (newest !== undefined && newest - now > thresholds.skewMs) {
    findings.push({
      level: 'warning',
      code: 'future_records',
      message: `${spec.file}: the newest record is dated ${facts.newest_ts}, in the future: a writer's clock is ahead (or CRUX_NOW was set)`,
    });
  }
  if (facts.compaction_due) {
    findings.push({
      level: 'warning',
      code: 'compaction_overdue',
      message: `${spec.file}: ${facts.bytes} bytes of which about ${facts.live_bytes} are live: automatic compaction has not kept up (run \`crux journal compact\`)`,
    });
  }
  if (facts.index === 'wrong') {
    findings.push({
      level: 'warning',
      code: 'index_wrong',
      message: `cache/${spec.file}.idx matches the journal's file but names another chain head: delete it (it is a cache; the next write rebuilds it) and report this bug`,
    });
  } else if (facts.index === 'unusable') {
    findings.push({
      level: 'warning',
      code: 'cache_unusable',
      message: `cache/${spec.file}.idx cannot be used (cache/ is not a readable directory, or the file is not a regular file): every command replays ${spec.file}; make cache/ a directory crux can read and write, or remove it (it is a cache)`,
    });
  } else if (facts.index === 'stale' || facts.index === 'absent') {
    findings.push({
      level: 'note',
      code: 'index_stale',
      message: `the key index of ${spec.file} is ${facts.index}: commands on one session replay the whole journal until the next write rebuilds it`,
    });
  }
  return {
    name: facts.name,
    file: facts.file,
    exists: true,
    bytes: facts.bytes,
    records: facts.records,
    last_write: facts.newest_ts,
    healthy: problems.length === 0,
    problems,
    torn_tail: facts.torn_tail,
    quarantined: facts.quarantined,
    replay_ms: facts.replay_ms,
    live_bytes: facts.live_bytes,
    index: facts.index,
  };
}

function judgeSessions(sessions: Sessions | undefined, input: DoctorInput, findings: Finding[]): DoctorReport['sessions'] {
  const byStatus: Record<string, number> = {};
  const stranded: SessionBrief[] = [];
  const overdue: SessionBrief[] = [];
  let inScope = 0;
  let unscoped = 0;
  let otherAgents = 0;
  for (const record of sessions?.values() ?? []) {
    const view = viewSession(record, input.now, input.thresholds);
    byStatus[view.status] = (byStatus[view.status] ?? 0) + 1;
    const { agent } = unscopeSessionId(record.key as ScopedSessionId);
    if (agent === undefined) unscoped += 1;
    else if (agent === input.agent) inScope += 1;
    else otherAgents += 1;
    if (view.status === 'closed') continue;
    const brief: SessionBrief = {
      session_id: view.session_id,
      agent: view.agent,
      status: view.status,
      updated_at: view.updated_at,
      expires_at: view.expires_at,
      freshness: view.freshness,
    };
    if (view.freshness === 'stale') stranded.push(brief);
    const expires = tryParseTime(view.expires_at);
    if (expires !== undefined && input.now - expires > REAP_GRACE_MS) overdue.push(brief);
  }
  const oldestFirst = (a: SessionBrief, b: SessionBrief) => (a.updated_at ?? '').localeCompare(b.updated_at ?? '');
  stranded.sort(oldestFirst);
  overdue.sort((a, b) => (a.expires_at ?? '').localeCompare(b.expires_at ?? ''));
  if (stranded.length > 0) {
    findings.push({
      level: 'warning',
      code: 'stranded_sessions',
      message: `${stranded.length} session(s) stranded: not closed, and not written for over ${Math.round((input.thresholds ?? DEFAULT_THRESHOLDS).staleMs / 3_600_000)} h (\`crux session list --stranded --all-agents\`)`,
    });
  }
  if (overdue.length > 0) {
    findings.push({
      level: 'warning',
      code: 'reap_overdue',
      message: `${overdue.length} session(s) expired over ${REAP_GRACE_MS / 60_000} min ago and are still open, the oldest since ${overdue[0]!.expires_at}: is \`crux session reap\` running from cron?`,
    });
  }
  if (input.agent === undefined && otherAgents > 0) {
    findings.push({
      level: 'note',
      code: 'scoped_sessions',
      message: `no agent identity is set: ${otherAgents} session(s) stored under an agent's scope are invisible to plain \`session\` commands (set --agent or CRUX_AGENT)`,
    });
  }
  return {
    total: sessions?.size ?? 0,
    by_status: byStatus,
    in_scope: inScope,
    unscoped,
    other_agents: otherAgents,
    stranded_count: stranded.length,
    stranded: stranded.slice(0, LIST_LIMIT),
    overdue_reap_count: overdue.length,
    overdue_reap: overdue.slice(0, LIST_LIMIT),
  };
}

/** Which key a mint would use: an environment secret wins over the key file (SPEC §6). */
async function judgeKey(input: DoctorInput, usable: boolean, findings: Finding[]): Promise<DoctorReport['handoff_key']> {
  const { env, dir } = input;
  const path = dir.keys.describe(HANDOFF_KEY);
  const stat = usable ? await dir.keys.stat(HANDOFF_KEY) : undefined;
  const facts = { exists: stat !== undefined, bytes: stat?.bytes ?? 0, mode: stat?.mode ?? null };
  const present: { source: KeySource; key: () => Promise<Uint8Array | undefined> | Uint8Array | undefined }[] = [];
  if (env.CRUX_HANDOFF_SECRET) present.push({ source: 'CRUX_HANDOFF_SECRET', key: () => deriveKeyFromSecret(env.CRUX_HANDOFF_SECRET!) });
  if (env.CRUX_MCP_HANDOFF_SECRET) present.push({ source: 'CRUX_MCP_HANDOFF_SECRET', key: () => deriveCompatKey(env.CRUX_MCP_HANDOFF_SECRET!) });
  if (facts.exists) {
    present.push({
      source: 'file',
      key: async () => {
        const bytes = await dir.keys.peek(HANDOFF_KEY);
        if (bytes === undefined) {
          findings.push({ level: 'warning', code: 'key_unreadable', message: `${path} cannot be read` });
          return undefined;
        }
        if (bytes.length !== KEY_BYTES) {
          findings.push({ level: 'warning', code: 'key_bad_size', message: `${path} is ${bytes.length} bytes, not ${KEY_BYTES}: mint and accept will refuse it` });
          return undefined;
        }
        return new Uint8Array(bytes);
      },
    });
    if (!isPrivate(facts.mode)) {
      findings.push({ level: 'warning', code: 'key_exposed', message: `${path} is mode ${octal(facts.mode)}: group or others can read the handoff key, so handoff commands refuse it (chmod 600; a key others have read is no longer secret)` });
    }
  }
  if (env.CRUX_MCP_HANDOFF_SECRET && !env.CRUX_HANDOFF_SECRET) {
    findings.push({ level: 'note', code: 'compat_key', message: 'the handoff key comes from CRUX_MCP_HANDOFF_SECRET (Crux daemon compatibility: a bare hash of the secret, without domain separation)' });
  }
  const chosen = present[0];
  const key = await chosen?.key();
  return {
    source: chosen?.source ?? 'none',
    fingerprint: key === undefined ? null : fingerprintOf(key),
    file: {
      path: HANDOFF_KEY_FILE,
      exists: facts.exists,
      mode: octal(facts.mode),
      bytes: facts.exists ? facts.bytes : null,
      private: isPrivate(facts.mode),
    },
    shadowed: present.slice(1).map((p) => p.source),
  };
}

async function agentKeyOf(dir: JournalStore, agent: string, findings: Finding[]): Promise<{ key_id: string; path: string } | null> {
  try {
    const key = await loadAgentKey(dir.keys, agent);
    return key === undefined ? null : { key_id: key.key_id, path: key.path };
  } catch (error) {
    findings.push({ level: 'warning', code: 'agent_key_unusable', message: (error as Error).message });
    return null;
  }
}

const LEVEL_ORDER = { fault: 0, warning: 1, note: 2 } as const;
const sortFindings = (findings: Finding[]) => [...findings].sort((a, b) => LEVEL_ORDER[a.level] - LEVEL_ORDER[b.level]);

/** A holder's command line as a message shows it: controls made visible, at most 60 characters. */
function shortCommand(command: string): string {
  const visible = command.replace(/[\p{Cc}\p{Cf}]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  return visible.length > 60 ? `${visible.slice(0, 59)}…` : visible;
}
