// `crux doctor`: gathers what an operator checks at 3 am and judges it — including whether derived state advances.
//
// The second seed's lesson: a health report that only checks that the newest record parses reports health while
// nothing advances. So besides damage, the doctor asks the questions that catch a stuck pipeline: are expired
// sessions being reaped, do record times move forward, did auto-compaction keep up, are sessions stranded.
import type { JournalFacts } from '../journal/core/store-boundary';
import { formatTime } from '../shared/time';
import { HANDOFF_STORE, keyRows, type Ledger } from './handoff/ledger';
import { DEFAULT_THRESHOLDS } from './session/freshness';
import { SESSION_STORE } from './session/fold';

import { isPrivate, octal, type DoctorInput, type DoctorReport, type Finding } from './doctor-report';
import { judgeJournal } from './doctor-journals';
import { judgeSessions } from './doctor-sessions';
import { doctorSpec, type SessionBriefs } from './doctor-folds';
import { agentKeyOf, judgeEncryption, judgeKey } from './doctor-keys';

export * from './doctor-report';

export async function gatherDoctor(input: DoctorInput): Promise<DoctorReport> {
  const { dir, now } = input;
  const findings: Finding[] = [];
  // The store surveys under the lock when it is free, so that the journals hold still.
  // Each journal folded by doctor's own rule (doctor-folds.ts): what the report needs of it, not the store's whole state.
  // The sessions are judged as soon as their journal is folded (the briefs released), their findings kept for their place.
  const judge = (briefs: SessionBriefs | undefined): JudgedSessions => {
    const found: Finding[] = [];
    return { report: judgeSessions(briefs, input, found), findings: found };
  };
  const facts = await dir.survey(input.stores.map((spec) => doctorSpec(spec, judge)));
  const root = facts.location;
  const { usable } = root;
  const server = facts.server;
  if (server !== undefined && server.schema_version > server.crux_schema_version) {
    findings.push({
      level: 'fault',
      code: 'schema_newer',
      message: `the schema ${server.schema} is at version ${server.schema_version}, newer than this crux writes (${server.crux_schema_version}): upgrade crux`,
    });
  } else if (root.exists && !usable) {
    findings.push({ level: 'fault', code: 'data_dir_not_directory', message: `${root.path} exists but is not a directory` });
  } else if (!root.exists) {
    const created = server === undefined ? 'the first write creates it, mode 0700' : `the first write creates the schema ${server.schema}`;
    findings.push({ level: 'note', code: 'data_dir_absent', message: `${root.path} does not exist yet: nothing has been written (${created})` });
  } else if (root.mode !== null && !isPrivate(root.mode)) {
    findings.push({
      level: 'warning',
      code: 'data_dir_exposed',
      message: `${root.path} is mode ${octal(root.mode)}: group or others can reach it (chmod 700)`,
    });
  }
  // Whether an acknowledged write survives a failover (SPEC §11): a warning when it is on the primary alone.
  const replication = server?.replication;
  if (replication !== undefined && replication.role === 'primary') {
    findings.push({ level: replication.replicated === true ? 'note' : 'warning', code: 'replication', message: replication.summary });
  }
  const surveys: JournalFacts<any>[] = facts.journals;
  const lockProbe = facts.lock;
  const holder = lockProbe.holder;
  const who = holder ? `pid ${holder.pid} (${shortCommand(holder.command)})` : 'another process';
  if (lockProbe.held) {
    findings.push({ level: 'note', code: 'lock_held', message: `the writers' lock is held right now by ${who}; the journals were read without it` });
  }
  if (lockProbe.stale === true) {
    findings.push({
      level: 'note',
      code: 'lock_stale',
      message: `the writers' lock was left by ${who}, which was killed; doctor recovered it (any writer would have, at once)`,
    });
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
  const judged = ((sessionIndex >= 0 ? surveys[sessionIndex]?.state : undefined) as JudgedSessions | undefined) ?? judge(undefined);
  findings.push(...judged.findings);
  const sessions = judged.report;

  const quarantineItems = facts.quarantine;
  if (quarantineItems.length > 0) {
    findings.push({
      level: 'note',
      code: 'quarantine',
      message: `${quarantineItems.length} item(s) in ${root.path}/quarantine: bytes taken out of journals, kept for you to inspect (crux never deletes them)`,
    });
  }
  if (facts.history_unreadable !== undefined) {
    findings.push({
      level: 'warning',
      code: 'history_unreadable',
      message: `${facts.history_unreadable}: session history, session get --at, journal check and journal compact exit 5 until crux can read it (make it a directory the user running crux may read and write)`,
    });
  }
  const other = facts.other_files;
  if (other.length > 0) {
    findings.push({ level: 'note', code: 'other_files', message: `not checked (no store declares them): ${other.join(', ')}` });
  }
  const key = await judgeKey(input, usable, findings);
  const encryption = await judgeEncryption(dir, usable, findings);

  return {
    healthy: !findings.some((f) => f.level === 'fault'),
    checked_at: formatTime(now),
    data_dir: {
      path: root.path,
      source: input.dataDirSource,
      why: input.storeWhy ?? null,
      exists: root.exists,
      mode: octal(root.mode),
      private: isPrivate(root.mode),
    },
    identity: {
      agent: input.agent ?? null,
      agent_source: input.agentSource,
      actor: input.actor ?? null,
      actor_source: input.actorSource,
      session_key: input.agent === undefined ? '<id>' : `__agent_session::${input.agent}::<id>`,
      agent_key: usable && input.agent !== undefined ? await agentKeyOf(dir, input.agent, findings) : null,
    },
    handoff_key: key,
    encryption,
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

interface JudgedSessions {
  readonly report: DoctorReport['sessions'];
  readonly findings: readonly Finding[];
}

const LEVEL_ORDER = { fault: 0, warning: 1, note: 2 } as const;
const sortFindings = (findings: Finding[]) => [...findings].sort((a, b) => LEVEL_ORDER[a.level] - LEVEL_ORDER[b.level]);

/** A holder's command line as a message shows it: controls made visible, at most 60 characters. */
function shortCommand(command: string): string {
  const visible = command.replace(/[\p{Cc}\p{Cf}]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  return visible.length > 60 ? `${visible.slice(0, 59)}…` : visible;
}
