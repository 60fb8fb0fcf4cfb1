// `crux doctor`, each journal judged: damage, clocks that disagree, compaction that did not keep up, the key index.
import type { StoreSpec } from '../journal/codec/store-spec';
import type { JournalFacts } from '../journal/core/store-boundary';
import { tryParseTime, type Instant } from '../shared/time';
import type { FreshnessThresholds } from './session/freshness';

import type { DoctorReport, Finding } from './doctor-report';

export function judgeJournal(
  spec: StoreSpec<any>,
  facts: JournalFacts<any> | undefined,
  now: Instant,
  thresholds: FreshnessThresholds,
  findings: Finding[],
): DoctorReport['journals'][number] {
  const name = spec.file.replace(/\.jsonl$/, '');
  if (facts === undefined || !facts.exists) {
    return {
      name,
      file: spec.file,
      exists: false,
      bytes: 0,
      records: 0,
      last_write: null,
      healthy: true,
      problems: [],
      torn_tail: false,
      quarantined: facts?.quarantined ?? 0,
      replay_ms: 0,
      live_bytes: null,
      index: null,
    };
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
