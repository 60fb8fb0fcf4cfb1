// What the overview shows besides the CLI's documents: what needs attention, sessions counted by status and freshness,
// activity per hour over the last days, the case bank's success rate by tag, and each journal's size.
// Activity: the counts per hour the writes keep in each keyed journal's index (domain/activity.ts), the window's
// hours alone (on PostgreSQL, rows of the index table: journal/pg/pg-tally.ts); a journal without one (handoffs), or
// over damage (on PostgreSQL, index rows not trusted), is read backwards from the end to the window's start.
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from '../context';
import { resolveStore } from '../store';
import { listSessions } from '../operations/session';
import { caseScope } from '../operations/scope';
import { casesByTag } from '../../domain/case/tag-counts';
import { parseCount } from '../parse';
import { invalid } from '../../shared/errors';
import { ALL_STORES } from '../../domain/stores';
import { ACTIVITY_SERIES, activitySeries, type ActivitySeries } from '../../domain/activity';
import { ATTENTION_WINDOWS, DEFAULT_ATTENTION, judgeAttention } from '../../domain/session/attention';
import { countSessions, FRESHNESS_ORDER, ordered } from '../../domain/session/counts';
import { SESSION_STATES } from '../../domain/session/machine';
import { sessionScope } from '../operations/scope';
import type { ApiScope } from './api-scope';

const HOUR = 3_600_000;
/** Records may be a little out of time order (writers' clocks): the backward scan reads this far past the window. */
const CLOCK_SLACK_MS = HOUR;
/**
 * Sessions by status and by freshness (open ones: a closed session has none), and what needs attention
 * (domain/session/attention.ts): each count with the first few sessions, from one read of every session.
 */
export async function sessionCounts(ctx: Context) {
  const scope = sessionScope(ctx);
  // From the index: each count a range's, the few sessions shown read alone (domain/session/counts.ts).
  const counted = await countSessions(scope.dir, scope.now, scope.thresholds, DEFAULT_ATTENTION);
  if (counted !== undefined) return { ...counted, attention: { ...counted.attention, windows: ATTENTION_WINDOWS } };
  const { sessions } = await listSessions(ctx, { all: true, archived: false, stranded: false, allAgents: true });
  const byStatus: Record<string, number> = {};
  const byFreshness: Record<string, number> = {};
  for (const s of sessions) {
    byStatus[s.status] = (byStatus[s.status] ?? 0) + 1;
    if (s.freshness !== null) byFreshness[s.freshness] = (byFreshness[s.freshness] ?? 0) + 1;
  }
  const attention = judgeAttention(sessions, ctx.now, DEFAULT_ATTENTION);
  return {
    total: sessions.length,
    by_status: ordered(byStatus, SESSION_STATES),
    by_freshness: ordered(byFreshness, FRESHNESS_ORDER),
    attention: { ...attention, windows: ATTENTION_WINDOWS },
  };
}

/** The series a line counts in, from its event name and (for a close) its outcome (domain/activity.ts). */
function seriesOf(line: string): ActivitySeries | undefined {
  const ev = /"ev":"([a-z_.]+)"/.exec(line.slice(0, 200))?.[1];
  if (ev === undefined) return undefined;
  return activitySeries(ev, ev === 'session.closed' ? /"outcome":"([a-z]+)"/.exec(line)?.[1] : undefined);
}

const tsOf = (line: string) => {
  const raw = /"ts":"([^"]+)"/.exec(line.slice(0, 200))?.[1];
  return raw === undefined ? Number.NaN : Date.parse(raw);
};

/** A data directory's journal lines from the last to the first, read in blocks from the end. */
export function* linesBackwards(path: string): Generator<string> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return;
  }
  try {
    let end = fstatSync(fd).size;
    let carry = Buffer.alloc(0);
    const block = Buffer.allocUnsafe(1 << 18);
    while (end > 0) {
      const start = Math.max(0, end - block.length);
      readSync(fd, block, 0, end - start, start);
      let bytes = Buffer.concat([block.subarray(0, end - start), carry]);
      let nl = bytes.lastIndexOf(10, bytes.length - 1);
      let stop = bytes.length;
      while (nl !== -1) {
        if (stop > nl + 1) yield bytes.toString('utf8', nl + 1, stop);
        stop = nl;
        nl = nl === 0 ? -1 : bytes.lastIndexOf(10, nl - 1);
      }
      carry = Buffer.from(bytes.subarray(0, stop));
      bytes = carry;
      end = start;
    }
    if (carry.length > 0) yield carry.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Records per hour and series over the last `days` (default 7, at most 31): `{since, hours: [{hour, puts, …}]}`. */
export async function activity(ctx: Context, scope: ApiScope, rawDays: string | undefined) {
  const days = rawDays === undefined ? 7 : parseCount(rawDays, 'days');
  if (days < 1 || days > 31) throw invalid(`days must be from 1 to 31: ${JSON.stringify(rawDays)}`);
  const first = Math.floor((ctx.now - days * 24 * HOUR) / HOUR) * HOUR + HOUR;
  const hours = Array.from({ length: days * 24 }, (_, i) => ({
    hour: new Date(first + i * HOUR).toISOString(),
    puts: 0,
    closes: 0,
    failed: 0,
    reaps: 0,
    handoffs: 0,
    cases: 0,
  }));
  const count = (line: string): boolean => {
    const ts = tsOf(line);
    if (ts < first - CLOCK_SLACK_MS) return false;
    const series = seriesOf(line);
    const i = Math.floor((ts - first) / HOUR);
    if (series !== undefined && i >= 0 && i < hours.length) hours[i]![series] += 1;
    return true;
  };
  const stores = ALL_STORES.filter((s) => s.file !== 'facts.jsonl');
  const firstHour = first / HOUR;
  for (const spec of stores) {
    // The counts the writes keep in the store's index, for its hours alone (domain/activity.ts): what a replay counts.
    // On PostgreSQL the journal's head is noted first, as a backward read would: the counts cover at least it.
    if (spec.tally !== undefined) await scope.pg?.seeHead(spec.file);
    const kept = spec.tally === undefined ? undefined : await ctx.dataDir.readTally?.(spec, firstHour, firstHour + hours.length - 1);
    if (kept === undefined && scope.pg !== undefined) {
      await scope.pg.linesBackwards(spec.file, count);
      continue;
    }
    if (kept === undefined) {
      for (const line of linesBackwards(join(ctx.dataDir.location, spec.file))) if (!count(line)) break;
      continue;
    }
    kept.forEach((row, i) => {
      for (const [s, name] of ACTIVITY_SERIES.entries()) hours[i]![name] += row[s] ?? 0;
    });
  }
  return { since: new Date(first).toISOString(), series: ACTIVITY_SERIES, hours };
}

/**
 * Cases and successes per tag (each case once per distinct tag), the most used tags first (at most 30): counted in
 * the derived layer (domain/case/tag-counts.ts), not by reading every case. Tags and success are plain on an
 * encrypted store too: no key is needed.
 */
export async function successByTag(ctx: Context) {
  const { cases, tags } = await casesByTag(caseScope(ctx));
  const rows = tags.map((t) => ({ tag: t.tag, cases: t.cases, successes: t.successes, success_rate: t.successes / t.cases }));
  rows.sort((a, b) => b.cases - a.cases || (a.tag < b.tag ? -1 : 1));
  return { cases, tags: rows.slice(0, 30) };
}

/** Each journal's bytes (a file's size; a table's on PostgreSQL) and where the store is. */
export async function journalSizes(ctx: Context, scope: ApiScope) {
  const target = resolveStore(scope.globals, scope.env);
  const journals =
    scope.pg !== undefined
      ? await scope.pg.sizes(ALL_STORES.map((s) => s.file))
      : ALL_STORES.map((s) => {
          try {
            const st = statSync(join(ctx.dataDir.location, s.file));
            return { name: s.file.replace(/\.jsonl$/, ''), file: s.file, bytes: st.size, modified_at: st.mtime.toISOString() };
          } catch {
            return { name: s.file.replace(/\.jsonl$/, ''), file: s.file, bytes: 0, modified_at: null };
          }
        });
  return { store: target.kind === 'dir' ? 'data_dir' : 'postgres', location: ctx.dataDir.location, journals };
}
