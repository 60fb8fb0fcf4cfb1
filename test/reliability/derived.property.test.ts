// Derived files never change an answer (SPEC §3), as a property over the real stores: random sequences of
// session and case commands through the domain operations, with faults injected — ENOSPC and short writes at
// derived-file writes (and ENOSPC at journal appends), cache files flipped, truncated, zeroed by 4 KiB page,
// deleted, replaced by another directory's or by an older copy of their own, and writes of the built binary
// killed with SIGKILL at a crash point. After every step each answer (get and its hint, show, --agent list,
// --stranded list, reap --dry-run, completion, retrieve) equals the answer of a copy of the journals alone,
// with no cache/ at all.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDir } from '../../src/journal/dir/data-dir';
import { CruxError } from '../../src/shared/errors';
import * as sessions from '../../src/domain/session/store';
import { listNewest } from '../../src/domain/session/newest-list';
import * as cases from '../../src/domain/case/store';
import type { AgentName, CaseId, LogicalSessionId } from '../../src/shared/ids';
import { crux, FULL, STRESS, tempDir } from '../helpers/cli';
import { crux as inProcess } from '../helpers/run-cli';
import { scaled, TIMEOUT } from './harness';

const RUNS = STRESS ? 400 : FULL ? 8 : 4; // histories: npm test, CI's run (CRUX_TEST_FULL), CRUX_STRESS
const START = Date.parse('2026-12-01T00:00:00Z');
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'deploy', 'the', 'timeout', 'cache', 'index', 'page'];

type Step =
  | { op: 'put'; agent: number; id: number; ttl: boolean }
  | { op: 'close'; agent: number; id: number }
  | { op: 'delete'; agent: number; id: number }
  | { op: 'record'; words: number[]; success: boolean; reward: number }
  | { op: 'import'; n: number }
  | { op: 'unrecord'; pick: number }
  | { op: 'reuse'; words: number[] }
  | { op: 'reap' }
  | { op: 'damage'; file: number; how: 'flip' | 'truncate' | 'zero' | 'delete' | 'foreign' | 'older'; at: number }
  | { op: 'fault'; kind: 'cache-enospc' | 'cache-short' | 'journal-enospc' }
  | { op: 'later'; hours: number }
  | { op: 'kill'; command: number; agent: number; id: number; point: number };

const agent = fc.integer({ min: 0, max: 2 });
const id = fc.integer({ min: 0, max: 5 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('put' as const), agent, id, ttl: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('close' as const), agent, id }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), agent, id }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('record' as const),
      words: fc.array(fc.nat(WORDS.length - 1), { minLength: 1, maxLength: 4 }),
      success: fc.boolean(),
      reward: fc.constantFrom(0, 0.5, 1),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('import' as const), n: fc.integer({ min: 1, max: 30 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('unrecord' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('reuse' as const), words: fc.array(fc.nat(WORDS.length - 1), { minLength: 1, maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'reap' as const }) },
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('damage' as const),
      file: fc.nat(),
      how: fc.constantFrom('flip', 'truncate', 'zero', 'delete', 'foreign', 'older') as fc.Arbitrary<'flip'>,
      at: fc.nat(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('fault' as const),
      kind: fc.constantFrom('cache-enospc', 'cache-short', 'journal-enospc') as fc.Arbitrary<'cache-enospc'>,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('later' as const), hours: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('kill' as const), command: fc.nat(), agent, id, point: fc.nat() }) },
);

// kill -9 inside a write, through the built binary: at a crash point of the append or of the derived files
// (#2: its second occurrence in the command), or not at all when the command never gets there (compaction's
// and history's points are the compaction crash tests'; these sequences never grow a journal that far).
const CRASH_POINTS = [
  'append:before-write',
  'append:after-quarantine',
  'append:before-fsync',
  'derived:before-rename',
  'derived:before-rename#2',
  'derived:mid-block',
];
const killCommand = (s: Step & { op: 'kill' }): string[] => {
  const as = AGENTS[s.agent] === undefined ? [] : ['--agent', AGENTS[s.agent]!];
  const commands = [
    [...as, 'session', 'put', `s${s.id}`, `{"killed":${s.point}}`],
    [...as, 'session', 'close', `s${s.id}`],
    ['case', 'record', '--task', `${WORDS[s.id]} ${WORDS[(s.id + 3) % WORDS.length]}`, '--action', 'a', '--outcome', 'o'],
    [...as, 'session', 'put', `s${(s.id + 1) % 6}`, '{"killed":true}', '--ttl', '1h'],
    ['case', 'retrieve', WORDS[s.id]!, '--mark-reused'],
  ];
  return commands[s.command % commands.length]!;
};

const AGENTS = [undefined, 'a', 'b'] as (AgentName | undefined)[];
const quiet = { warn: () => {} };

/** How many kill steps were killed at their crash point: some, as the first history (a put before its fsync) is. */
let kills = 0;

/** Injected write faults: the next write(s) of a kind fail (ENOSPC) or are short. */
let fault: (Step & { op: 'fault' }) | undefined;
// The CommonJS fs object, the one the journal layer requires (a module namespace cannot be patched).
const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
const realWriteSync = fs.writeSync;
function installFaults(): void {
  (fs as { writeSync: unknown }).writeSync = (fd: number, buffer: any, ...rest: any[]) => {
    const f = fault;
    if (f !== undefined && typeof buffer !== 'string') {
      let path = '';
      try {
        path = fs.readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        // Not on Linux: no fault.
      }
      const isCache = path.includes('/cache/');
      const isJournal = path.endsWith('.jsonl');
      if ((f.kind === 'journal-enospc' && isJournal) || (f.kind === 'cache-enospc' && isCache)) {
        fault = undefined;
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      if (f.kind === 'cache-short' && isCache) {
        // Half of what was asked, then the disk is full: a torn block or page.
        fault = { op: 'fault', kind: 'cache-enospc' };
        const [offset = 0, length = buffer.length - offset, position] = rest as number[];
        return realWriteSync(fd, buffer, offset, Math.max(1, Math.floor(length / 2)), position);
      }
    }
    return (realWriteSync as (...args: any[]) => number)(fd, buffer, ...rest);
  };
}
afterEach(() => {
  (fs as { writeSync: unknown }).writeSync = realWriteSync;
  fault = undefined;
});

function cacheFiles(root: string): string[] {
  try {
    return fs
      .readdirSync(join(root, 'cache'))
      .filter((f) => !f.endsWith('.tmp'))
      .sort()
      .map((f) => join(root, 'cache', f));
  } catch {
    return [];
  }
}

/** Copies the journals alone (no cache/) to a fresh directory: what a replay answers. */
function journalsOnly(root: string): DataDir {
  const copy = join(tempDir(), 'truth');
  fs.mkdirSync(copy, { mode: 0o700 });
  for (const f of fs.readdirSync(root)) if (f.endsWith('.jsonl')) fs.copyFileSync(join(root, f), join(copy, f));
  return new DataDir(copy, quiet, 5_000);
}

async function answer<T>(fn: () => Promise<T>): Promise<T | { error: string }> {
  try {
    return await fn();
  } catch (error) {
    // A not-found's hint names the other agents that hold the id (read by logical id through the index).
    if (error instanceof CruxError) return { error: error.kind, ...(error.kind === 'not_found' ? { hint: error.hint } : {}) };
    throw Object.assign(new Error(`not a CruxError: ${(error as Error).stack}`), { cause: error });
  }
}

/** Every query's answer in a data directory at time `now`. */
async function answers(dir: DataDir, now: number): Promise<unknown> {
  const out: unknown[] = [];
  for (const a of AGENTS) {
    const scope = { dir, agent: a, now };
    for (let i = 0; i < 6; i++) out.push(await answer(() => sessions.getSession(scope, `s${i}` as LogicalSessionId)));
    if (a !== undefined) out.push(await answer(() => sessions.listStoredSessions(scope, { all: true, archived: false, stranded: false, allAgents: false })));
    out.push(await answer(() => sessions.listStoredSessions(scope, { all: false, archived: false, stranded: true, allAgents: false })));
    out.push(await answer(() => sessions.reapSessions(scope, { dryRun: true })));
    // Completion: the scope's ids from a prefix on, in order, cut (read by prefix through the index).
    for (const prefix of ['', 's', 's3']) for (const max of [2, 200]) out.push(await answer(() => sessions.sessionIdsStartingWith(scope, prefix, max)));
    // Limited lists newest first (through the index where it verifies): the rows and the count a replay gives.
    if (a === undefined) {
      for (const stranded of [true, false]) {
        for (const allAgents of [false, true]) {
          for (const limit of [1, 3]) out.push(await answer(() => listNewest(scope, { all: false, archived: false, stranded, allAgents }, limit)));
          // Not counted (a --json list or a pipe): the pages of the rows shown only, and the rows and hidden count a
          // replay gives; where it cannot tell (no index), the whole list cut, as the CLI then lists.
          for (const limit of [1, 3]) {
            const filter = { all: false, archived: false, stranded, allAgents };
            out.push(
              await answer(async () => {
                const cut = await listNewest(scope, filter, limit, { count: false });
                if (cut !== undefined) return { sessions: cut.sessions, hidden_scoped: cut.hidden_scoped, total: cut.total ?? 'not counted' };
                const whole = await sessions.listStoredSessions(scope, filter);
                return { sessions: whole.sessions.slice(0, limit), hidden_scoped: whole.hidden_scoped, total: 'not counted' };
              }),
            );
          }
        }
      }
    }
  }
  const caseScope = { dir, now };
  for (const q of ['the deploy', 'alpha beta gamma', 'timeout cache index page']) {
    for (const onlySuccess of [false, true]) {
      out.push(await answer(() => cases.retrieveCases(caseScope, { text: q, topK: 3, onlySuccess, minSimilarity: 0 }, false)));
    }
  }
  const all = await answer(() => cases.listCases(caseScope));
  out.push(all);
  if (Array.isArray(all)) for (const c of all.slice(0, 3)) out.push(await answer(() => cases.showCase(caseScope, c.case_id)));
  return out;
}

async function apply(dir: DataDir, other: DataDir, saved: Map<string, Buffer>, s: Step, now: number, recorded: CaseId[]): Promise<void> {
  const scope = (a: number) => ({ dir, agent: AGENTS[a], now });
  const run = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (error) {
      if (!(error instanceof CruxError)) throw new Error(`${s.op}: not a CruxError: ${(error as Error).stack}`);
    }
  };
  switch (s.op) {
    case 'put':
      return run(() =>
        sessions.putSession(scope(s.agent), `s${s.id}` as LogicalSessionId, { state: `{"n":${now}}`, ...(s.ttl ? { ttlMs: 5 * 3_600_000 } : {}) }),
      );
    case 'close':
      return run(() => sessions.closeSession(scope(s.agent), `s${s.id}` as LogicalSessionId, { outcome: 'completed' }));
    case 'delete':
      return run(() => sessions.deleteSession(scope(s.agent), `s${s.id}` as LogicalSessionId));
    case 'reap':
      return run(() => sessions.reapSessions({ dir, agent: undefined, now }, { dryRun: false }));
    case 'record': {
      const caseId = `c_${recorded.length}_${now}` as CaseId;
      recorded.push(caseId);
      const draft = {
        task: s.words.map((w) => WORDS[w]).join(' '),
        context: null,
        action: 'a',
        outcome: 'o',
        success: s.success,
        reward: s.reward,
        tags: [],
        source_receipt: null,
      };
      return run(() => cases.recordCase({ dir, now }, draft, caseId));
    }
    case 'import': {
      const batch = Array.from({ length: s.n }, (_, i) => ({
        case_id: `c_imp_${i % 12}` as CaseId,
        task: `${WORDS[i % WORDS.length]} ${WORDS[(i * 3) % WORDS.length]}`,
        context: null,
        action: 'a',
        outcome: 'o',
        success: i % 3 !== 0,
        reward: (i % 5) / 4,
        tags: [],
        source_receipt: null,
        created_at: new Date(now).toISOString(),
        times_reused: 0,
      }));
      const unique = [...new Map(batch.map((c) => [c.case_id, c])).values()];
      return run(() => cases.importCases({ dir, now }, unique));
    }
    case 'unrecord':
      if (recorded.length === 0) return;
      return run(() => cases.deleteCase({ dir, now }, recorded[s.pick % recorded.length]!));
    case 'reuse':
      return run(() =>
        cases.retrieveCases({ dir, now }, { text: s.words.map((w) => WORDS[w]).join(' '), topK: 2, onlySuccess: false, minSimilarity: 0 }, true),
      );
    case 'fault':
      fault = s;
      return;
    case 'later':
      return;
    case 'kill': {
      const point = CRASH_POINTS[s.point % CRASH_POINTS.length]!;
      const env = { CRUX_NOW: new Date(now).toISOString(), CRUX_TEST_CRASH_AT: point, CRUX_TEST_INDEX_LOG_ENTRIES: '24' };
      // Killed (or refused, or done when the command never reaches the point): each is a state to answer from.
      const r = await crux(dir.root, killCommand(s), { env });
      if (r.exitCode === -1) kills += 1; // killed by its signal
      return;
    }
    case 'damage': {
      const files = cacheFiles(dir.root);
      if (files.length === 0) return;
      const file = files[s.file % files.length]!;
      const bytes = fs.readFileSync(file);
      // Keep an older copy of each file for 'older' (a cache from before later writes).
      if (!saved.has(file)) saved.set(file, bytes);
      switch (s.how) {
        case 'flip':
          if (bytes.length > 0) bytes[s.at % bytes.length]! ^= 1 << (s.at % 8);
          return fs.writeFileSync(file, bytes);
        case 'truncate':
          return fs.writeFileSync(file, bytes.subarray(0, bytes.length === 0 ? 0 : s.at % bytes.length));
        case 'zero': {
          const page = Math.floor((s.at % Math.max(1, bytes.length)) / 4096);
          bytes.fill(0, page * 4096, Math.min(bytes.length, (page + 1) * 4096));
          return fs.writeFileSync(file, bytes);
        }
        case 'delete':
          return fs.rmSync(file);
        case 'foreign': {
          const theirs = join(other.root, 'cache', file.split('/').pop()!);
          if (fs.existsSync(theirs)) fs.copyFileSync(theirs, file);
          return;
        }
        case 'older':
          return fs.writeFileSync(file, saved.get(file)!);
      }
    }
  }
}

describe('derived files never change an answer (property, real stores)', () => {
  it(
    'every answer equals a replay of the journals alone, under cache damage and write faults',
    async () => {
      // Another directory with its own history, whose caches get copied in.
      const other = new DataDir(join(tempDir(), 'other'), quiet, 5_000);
      for (let i = 0; i < 4; i++) {
        await sessions.putSession({ dir: other, agent: 'a' as AgentName, now: START }, `s${i}` as LogicalSessionId, { state: '{"other":true}' });
        await cases.recordCase(
          { dir: other, now: START },
          { task: 'the deploy alpha', context: null, action: 'x', outcome: 'y', success: true, reward: 1, tags: [], source_receipt: null },
          `c_other_${i}` as CaseId,
        );
      }
      installFaults();
      process.env.CRUX_TEST_INDEX_LOG_ENTRIES = '24';
      try {
        await fc.assert(
          fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 24 }), async (steps) => {
            fault = undefined;
            const dir = new DataDir(join(tempDir(), 'data'), quiet, 5_000);
            const saved = new Map<string, Buffer>();
            const recorded: CaseId[] = [];
            let now = START;
            for (const s of steps) {
              now += s.op === 'later' ? s.hours * 3_600_000 : 60_000;
              // The test's own file damage is not a write of crux's: a pending fault waits for the next command.
              const pending: typeof fault = s.op === 'damage' ? fault : undefined;
              if (pending !== undefined) fault = undefined;
              await apply(dir, other, saved, s, now, recorded);
              if (pending !== undefined) {
                fault = pending;
                continue;
              }
              if (s.op === 'fault') continue;
              fault = undefined;
              if (!dir.exists()) continue;
              const want = await answers(journalsOnly(dir.root), now);
              const got = await answers(dir, now);
              expect(got).toEqual(want);
            }
          }),
          { numRuns: RUNS, examples: [[Array.of<Step>({ op: 'put', agent: 0, id: 0, ttl: false }, { op: 'kill', command: 0, agent: 0, id: 1, point: 2 })]] },
        );
        expect(kills).toBeGreaterThan(0);
      } finally {
        delete process.env.CRUX_TEST_INDEX_LOG_ENTRIES;
      }
    },
    TIMEOUT,
  );
});

describe('derived files after kill -9 at their crash points (the built binary)', () => {
  const NOW = { CRUX_NOW: '2026-12-01T12:00:00Z' };
  // In-process but for the crash points, which run-cli's crux spawns (a process is killed at them).
  const cli = (dir: string, args: string[], env: Record<string, string> = {}) => inProcess(dir, args, { env: { ...NOW, ...env } });
  /** What a reader answers, through the CLI. */
  async function cliAnswers(dir: string): Promise<string[]> {
    const out: string[] = [];
    for (const args of [
      ['session', 'get', 's2'],
      ['--agent', 'a', 'session', 'list', '--json'],
      ['session', 'reap', '--dry-run', '--json'],
      ['case', 'retrieve', 'deploy the cache', '--json'],
    ]) {
      const r = await cli(dir, args);
      out.push(`${r.exitCode} ${r.stdout}`);
    }
    return out;
  }

  it(
    'every crash point of a derived write leaves answers equal to the journals alone, and the next write heals',
    async () => {
      const points = ['derived:before-rename', 'derived:before-rename#2', 'derived:mid-block', 'append:before-fsync'];
      const commands = [
        ['--agent', 'a', 'session', 'put', 's1', '{"n":2}'],
        ['case', 'record', '--task', 'deploy the cache again', '--action', 'a', '--outcome', 'o'],
        ['session', 'close', 's2'],
      ];
      let killed = 0;
      for (const [p, point] of points.entries()) {
        // npm test: one command per point (in turn); CRUX_STRESS=1: every command at every point.
        for (const command of scaled(1, commands.length) === 1 ? [commands[p % commands.length]!] : commands) {
          const dir = join(tempDir(), 'data');
          for (const args of [
            ['session', 'put', 's2', '{"n":1}'],
            ['--agent', 'a', 'session', 'put', 's1', '{"n":1}'],
            ['case', 'record', '--task', 'deploy the cache', '--action', 'a', '--outcome', 'o'],
          ]) {
            expect((await cli(dir, args)).exitCode).toBe(0);
          }
          const run = await cli(dir, command, { CRUX_TEST_CRASH_AT: point });
          if (run.exitCode !== 0) killed += 1;
          expect(await cliAnswers(dir)).toEqual(await cliAnswers(journalsOnly(dir).root));
          if (p === 0) {
            expect((await cli(dir, ['session', 'put', 's4', '{}'])).exitCode).toBe(0);
            expect(await cliAnswers(dir)).toEqual(await cliAnswers(journalsOnly(dir).root));
          }
        }
      }
      expect(killed).toBeGreaterThanOrEqual(2);
    },
    TIMEOUT,
  );
});
