// Every read equals a replay, for any state of cache/, and reports each problem it passed over once (SPEC §3;
// issues 47 and 53): random histories — clocks that go back and forth, agents, closes, archives, deletes, handoffs,
// cases, compactions — with cache/ saved at random points and put back later (or removed, or one of its files
// damaged), then at most one kind of damage to a journal (a bit flipped, a line cut short, a torn tail, a line
// deleted, two lines swapped). Each read — the CLI's, run in-process through the operations it runs (a Context of
// its own, its stderr kept), the read-only MCP tools' and the `crux ui` API routes' (replay-surfaces.ts) — answers
// as the same read of a copy of the journals alone (no cache/); the copy's read reports exactly the problems
// `journal check` finds in the journal it read, and the cached store's read some of them; each once, on stderr and
// in `warnings`. npm test: 200 histories (~20 CPU-s); CI 400; CRUX_STRESS=1: 3,000.
import * as fs from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { contextOf } from '../../src/cli/context';
import * as ops from '../../src/cli/operations/session';
import * as caseOps from '../../src/cli/operations/case';
import { mint } from '../../src/cli/operations/handoff';
import { deleteSession, reapSessions, sessionIdsStartingWith } from '../../src/domain/session/store';
import { deleteCase, recordCase, retrieveCases } from '../../src/domain/case/store';
import { sessionScope } from '../../src/cli/operations/scope';
import type { SessionStatus } from '../../src/domain/session/machine';
import { ALL_STORES } from '../../src/domain/stores';
import { DataDir } from '../../src/journal/dir/data-dir';
import { CruxError } from '../../src/shared/errors';
import type { AgentName, CaseId, HandoffId, LogicalSessionId } from '../../src/shared/ids';
import { FULL, tempDir } from '../helpers/cli';
import { STRESS, TIMEOUT } from './harness';
import { answer, JOURNALS, type Read, SORTED_CASE_READS, SURFACE_READS } from './replay-surfaces';
import { FOUND as FOUND_RAW } from './reads-equal-replay-found';

// Histories: 200 in `npm test` (issue 47: hundreds), 400 in CI's run (CRUX_TEST_FULL), 3 000 in the stress run.
const RUNS = STRESS ? 3000 : FULL ? 400 : 200;
const START = Date.parse('2026-12-01T00:00:00Z');
const AGENTS = [undefined, 'a', 'b'] as const;
const WORDS = ['deploy', 'cache', 'index', 'timeout', 'page'];

type Step =
  | { op: 'put'; agent: number; id: number; skew: number }
  | { op: 'close' | 'archive' | 'delete' | 'handoff'; agent: number; id: number }
  | { op: 'record'; words: number[]; success: boolean; tags?: number[]; skew?: number; reward?: number }
  | { op: 'unrecord'; pick: number }
  | { op: 'reuse'; words: number[] }
  | { op: 'compact' | 'save' }
  | { op: 'restore'; how: 'saved' | 'absent' | 'damaged'; at: number };

type Damage = { how: 'flip' | 'cut' | 'torn' | 'delete' | 'swap'; file: number; at: number };

const agent = fc.nat(2);
const id = fc.nat(4);
const step: fc.Arbitrary<Step> = fc.oneof(
  // Minutes from the history's clock: back (another host's clock, --now) as well as forth.
  { weight: 6, arbitrary: fc.record({ op: fc.constant('put' as const), agent, id, skew: fc.integer({ min: -600, max: 30 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('close' as const, 'archive' as const, 'delete' as const), agent, id }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('handoff' as const), agent: fc.integer({ min: 1, max: 2 }), id }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('record' as const),
      words: fc.array(fc.nat(WORDS.length - 1), { minLength: 1, maxLength: 3 }),
      success: fc.boolean(),
      // Tags (a word of the task or not), created_at back and forth, and rewards that tie: the sorted lists' keys.
      tags: fc.array(fc.nat(WORDS.length - 1), { maxLength: 2 }),
      skew: fc.integer({ min: -600, max: 30 }),
      reward: fc.constantFrom(0, 0.5, 1),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('unrecord' as const), pick: fc.nat() }) },
  // A retrieve that marks its matches reused: reuse counts set since a snapshot (the order by reused moves them).
  { weight: 1, arbitrary: fc.record({ op: fc.constant('reuse' as const), words: fc.array(fc.nat(WORDS.length - 1), { minLength: 1, maxLength: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('compact' as const) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('save' as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('restore' as const), how: fc.constantFrom('saved' as const, 'absent' as const, 'damaged' as const), at: fc.nat() }),
  },
);
const damage: fc.Arbitrary<Damage | null> = fc.option(
  fc.record({ how: fc.constantFrom('flip' as const, 'cut' as const, 'torn' as const, 'delete' as const, 'swap' as const), file: fc.nat(1), at: fc.nat() }),
  { freq: 2 },
);

const FILTERS = [
  { all: false, archived: false, stranded: false },
  { all: true, archived: false, stranded: false },
  { all: false, archived: true, stranded: false },
  { all: false, archived: false, stranded: true },
];

const STATUSES: (readonly SessionStatus[])[] = [['closed'], ['archived'], ['active', 'handed_off'], ['handed_off', 'closed']];

const READS: Read[] = [
  ...[0, 1, 2, 3, 4].flatMap((i): Read[] => [
    { name: `session get s${i}`, file: 'sessions.jsonl', run: (ctx) => ops.getSession(ctx, `s${i}` as LogicalSessionId) },
    { name: `session history s${i}`, file: 'sessions.jsonl', run: (ctx) => ops.historyOf(ctx, `s${i}` as LogicalSessionId, undefined) },
  ]),
  ...FILTERS.flatMap((f) =>
    [false, true].flatMap((allAgents) =>
      [undefined, 1, 3].flatMap((limit) =>
        [true, false].map(
          (count): Read => ({
            name: `session list ${JSON.stringify({ ...f, allAgents, limit, count })}`,
            file: 'sessions.jsonl',
            run: async (ctx) => {
              const { document, total } = await ops.countedSessions(ctx, { ...f, allAgents }, undefined, { limit }, { count });
              return { document, total: count ? total : 'not asked' };
            },
          }),
        ),
      ),
    ),
  ),
  // --status, read through the index's status_updated ranges when limited (newest-list.ts).
  ...STATUSES.flatMap((statuses) =>
    [false, true].flatMap((allAgents) =>
      [undefined, 1, 3].flatMap((limit) =>
        [true, false].map(
          (count): Read => ({
            name: `session list --status ${statuses.join(',')} ${JSON.stringify({ allAgents, limit, count })}`,
            file: 'sessions.jsonl',
            run: async (ctx) => {
              const where = (s: { status: string }) => (statuses as readonly string[]).includes(s.status);
              const filter = { all: true, archived: false, stranded: false, allAgents };
              const { document, total } = await ops.countedSessions(ctx, filter, undefined, { limit, where }, { count, statuses });
              return { document, total: count ? total : 'not asked' };
            },
          }),
        ),
      ),
    ),
  ),
  { name: 'session reap --dry-run', file: 'sessions.jsonl', run: (ctx) => reapSessions(sessionScope(ctx), { dryRun: true }) },
  ...(
    [
      ['', 200],
      ['', 2],
      ['s', 3],
      ['s2', 200],
    ] as const
  ).map(
    ([prefix, max]): Read => ({
      name: `__complete session ${prefix} (${max})`,
      file: 'sessions.jsonl',
      run: (ctx) => sessionIdsStartingWith(sessionScope(ctx), prefix, max),
    }),
  ),
  { name: 'case list', file: 'cases.jsonl', run: (ctx) => caseOps.listCases(ctx, {}) },
  { name: 'case list --only-failure --limit 2', file: 'cases.jsonl', run: (ctx) => caseOps.listCases(ctx, { success: false }, { limit: 2 }) },
  ...SORTED_CASE_READS,
  ...['deploy cache', 'timeout page index'].map(
    (text): Read => ({
      name: `case retrieve ${text}`,
      file: 'cases.jsonl',
      run: (ctx) => caseOps.retrieve(ctx, { text, topK: 3, onlySuccess: false, minSimilarity: 0 }, false),
    }),
  ),
  ...SURFACE_READS,
];

/** Reads made after every history: the activity chart's (from the counts the writes keep in the index: derived/tally.ts). */
const ALWAYS = READS.map((r) => r.name).filter((name) => name.includes('/api/overview/activity'));

/** Copies the journals and their history/ (not cache/): what a replay reads. */
function journalsOnly(root: string): string {
  const copy = join(tempDir(), 'replay');
  fs.mkdirSync(copy, { mode: 0o700 });
  for (const f of fs.readdirSync(root)) if (f.endsWith('.jsonl')) fs.copyFileSync(join(root, f), join(copy, f));
  if (fs.existsSync(join(root, 'history'))) fs.cpSync(join(root, 'history'), join(copy, 'history'), { recursive: true });
  return copy;
}

const cache = (root: string) => join(root, 'cache');

async function apply(root: string, s: Step, now: number, saved: { dir?: string }, recorded: CaseId[]): Promise<void> {
  const ctx = (a: number, at = now) => contextOf({ dataDir: root, agent: AGENTS[a], now: new Date(at).toISOString() }, {}, () => {});
  const sid = (i: number) => `s${i}` as LogicalSessionId;
  const run = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (error) {
      if (!(error instanceof CruxError)) throw error;
    }
  };
  switch (s.op) {
    case 'put':
      return run(() => ops.putSession(ctx(s.agent, now + s.skew * 60_000), sid(s.id), { state: `{"at":${s.skew}}` }));
    case 'close':
      return run(() => ops.closeSession(ctx(s.agent), sid(s.id), { outcome: 'completed' }));
    case 'archive':
      return run(() => ops.archiveSession(ctx(s.agent), sid(s.id), 'done'));
    case 'delete':
      return run(() => deleteSession(sessionScope(ctx(s.agent)), sid(s.id)));
    case 'handoff':
      return run(() =>
        mint(ctx(s.agent), {
          sessionId: sid(s.id),
          from: AGENTS[s.agent] as AgentName,
          to: AGENTS[3 - s.agent] as AgentName,
          message: null,
          ttlMs: 3_600_000,
          includeFacts: false,
          taskRecord: undefined,
          alg: 'ed25519',
          handoffId: `h_${now}_${s.id}` as HandoffId,
        }),
      );
    case 'record': {
      const caseId = `c_${recorded.length}` as CaseId;
      recorded.push(caseId);
      const draft = {
        task: s.words.map((w) => WORDS[w]).join(' '),
        context: null,
        action: 'a',
        outcome: 'o',
        success: s.success,
        reward: s.reward ?? 1,
        tags: [...new Set((s.tags ?? []).map((w) => WORDS[w]!))],
        source_receipt: null,
      };
      return run(() => recordCase({ dir: ctx(0).dataDir, now: now + (s.skew ?? 0) * 60_000 }, draft, caseId));
    }
    case 'reuse': {
      const query = { text: s.words.map((w) => WORDS[w]).join(' '), topK: 2, onlySuccess: false, minSimilarity: 0 };
      return run(() => retrieveCases({ dir: ctx(0).dataDir, now }, query, true).then(() => undefined));
    }
    case 'unrecord':
      if (recorded.length === 0) return;
      return run(() => deleteCase({ dir: ctx(0).dataDir, now }, recorded[s.pick % recorded.length]!));
    case 'compact':
      return run(() => new DataDir(root, { warn: () => {} }, 5_000).compact(ALL_STORES, new Date(now).toISOString()).then(() => undefined));
    case 'save':
      if (!fs.existsSync(cache(root))) return;
      saved.dir = join(tempDir(), 'saved');
      fs.cpSync(cache(root), saved.dir, { recursive: true });
      return;
    case 'restore': {
      if (s.how === 'damaged') {
        const files = fs.existsSync(cache(root)) ? fs.readdirSync(cache(root)).filter((f) => !f.endsWith('.tmp')) : [];
        if (files.length === 0) return;
        const file = join(cache(root), files[s.at % files.length]!);
        const bytes = fs.readFileSync(file);
        if (bytes.length > 0) bytes[s.at % bytes.length]! ^= 1 << (s.at % 8);
        return fs.writeFileSync(file, bytes);
      }
      fs.rmSync(cache(root), { recursive: true, force: true });
      if (s.how === 'saved' && saved.dir !== undefined) fs.cpSync(saved.dir, cache(root), { recursive: true });
      return;
    }
  }
}

/** One kind of damage to one journal, as a disk or a hand would do it; false when there was nothing to damage. */
function damageJournal(root: string, d: Damage): boolean {
  const path = join(root, JOURNALS[d.file]!);
  if (!fs.existsSync(path)) return false;
  const text = fs.readFileSync(path, 'latin1');
  const lines = text.split('\n').slice(0, -1);
  if (lines.length === 0) return false;
  const i = d.at % lines.length;
  switch (d.how) {
    case 'flip': {
      const bytes = Buffer.from(text, 'latin1');
      const start = lines.slice(0, i).reduce((n, l) => n + l.length + 1, 0);
      // A bit of the line's text, never its newline.
      bytes[start + (d.at % lines[i]!.length)]! ^= 1 << (d.at % 7);
      fs.writeFileSync(path, bytes);
      return true;
    }
    case 'cut':
      lines[i] = lines[i]!.slice(0, Math.max(1, Math.floor(lines[i]!.length / 2)));
      break;
    case 'torn':
      fs.appendFileSync(path, `{"v":1,"seq":${lines.length + 1},"ev`);
      return true;
    case 'delete':
      if (lines.length < 2) return false;
      lines.splice(i, 1);
      break;
    case 'swap': {
      if (lines.length < 2) return false;
      const j = (i + 1) % lines.length;
      [lines[i], lines[j]] = [lines[j]!, lines[i]!];
      break;
    }
  }
  fs.writeFileSync(path, `${lines.join('\n')}\n`, 'latin1');
  return true;
}

/** The problems `journal check` finds in each journal, as `line: reason`. */
async function checked(root: string): Promise<Map<string, { journal: string[]; withHistory: string[] }>> {
  const reports = await new DataDir(root, { warn: () => {} }, 5_000).check(ALL_STORES, { repair: false, ts: new Date(START).toISOString() });
  return new Map(
    reports.map((r) => {
      const journal = r.problems.map((p) => `${p.line}: ${p.reason}`);
      // What check finds of the journal in its history's report: a first line that does not continue the history
      // before it. A history read (which reads both) tells it; a read of the journal alone cannot know it.
      const continuation = (r.history?.problems ?? []).filter((p) => p.file === r.file).map((p) => `${p.line}: ${p.reason}`);
      return [r.file, { journal: journal.sort(), withHistory: [...journal, ...continuation].sort() }];
    }),
  );
}

const said = (w: { file: string; line: number; reason: string }) => `${w.line}: ${w.reason}`;

/** Histories the property found once, run first every time (reads-equal-replay-found.ts). */
const FOUND = FOUND_RAW as [Step[], Step | null, Damage | null, string[], number, number][];

describe('every read equals a replay, and tells what it passed over once (differential, in-process)', () => {
  it(
    'random histories, cache/ saved and restored, one kind of journal damage',
    async () => {
      let damaged = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(step, { minLength: 3, maxLength: 14 }),
          // What cache/ is when the reads come: as the writes left it, or put back, removed or damaged then (a
          // backup restored, a writer killed between its journal write and its index append: behind its journal).
          fc.option(
            fc.record({ op: fc.constant('restore' as const), how: fc.constantFrom('saved' as const, 'absent' as const, 'damaged' as const), at: fc.nat() }),
            {
              freq: 3,
            },
          ),
          damage,
          fc.subarray(
            READS.map((r) => r.name),
            { minLength: 6, maxLength: 12 },
          ),
          agent,
          fc.integer({ min: 0, max: 48 }),
          async (steps, last, hurt, reads, reader, hours) => {
            const root = join(tempDir(), 'data');
            const saved: { dir?: string } = {};
            const recorded: CaseId[] = [];
            let now = START;
            for (const s of steps) {
              now += 60_000;
              await apply(root, s, now, saved, recorded);
            }
            if (!fs.existsSync(root)) return;
            if (last !== null) await apply(root, last, now, saved, recorded);
            if (hurt != null && damageJournal(root, hurt)) damaged += 1;
            const replay = journalsOnly(root);
            const problems = await checked(replay);
            const at = now + hours * 3_600_000;
            for (const read of READS.filter((r) => reads.includes(r.name) || ALWAYS.includes(r.name))) {
              const want = await answer(replay, AGENTS[reader], at, read);
              const got = await answer(root, AGENTS[reader], at, read);
              const what = `${read.name} as ${AGENTS[reader] ?? '(no agent)'}`;
              expect(got.out, what).toEqual(want.out);
              const checkedFile = problems.get(read.file);
              const found = (/history/.test(read.name) ? checkedFile?.withHistory : checkedFile?.journal) ?? [];
              for (const [store, r] of [
                ['replay', want],
                ['cached', got],
              ] as const) {
                // Each once: on stderr and in warnings.
                expect(new Set(r.stderr).size, `${what} (${store}): ${r.stderr.join('')}`).toBe(r.stderr.length);
                const keys = r.warnings.map((w) => JSON.stringify(w));
                expect(new Set(keys).size, `${what} (${store})`).toBe(keys.length);
                // Only the journal's own problems (a derived file bypassed is told too, as cache/…, line 0), and those
                // of the other journal it reads, if any.
                const journal = r.warnings.filter((w) => w.file === read.file).map(said);
                const other = r.warnings.filter((w) => w.file === read.also).map(said);
                expect(
                  r.warnings.filter((w) => w.file !== read.file && w.file !== read.also && !w.file.startsWith('cache/')),
                  `${what} (${store}): ${JSON.stringify(r.warnings)} ${r.stderr.join('')}`,
                ).toEqual([]);
                for (const p of journal) expect(found, `${what} (${store})`).toContain(p);
                for (const p of other) expect(problems.get(read.also!)?.journal ?? [], `${what} (${store})`).toContain(p);
                expect(r.stderr.length, `${what} (${store}): ${r.stderr.join('')} vs ${JSON.stringify(r.warnings)}`).toBe(r.warnings.length);
              }
              // Without cache/, a read reports every problem of the journal it read.
              if (read.whole !== false) expect(want.warnings.map(said).sort(), `${what} (replay)`).toEqual(found);
            }
          },
        ),
        // CRUX_TEST_FC_SEED and CRUX_TEST_FC_PATH replay a failure fast-check printed.
        {
          numRuns: RUNS,
          examples: FOUND,
          ...(process.env.CRUX_TEST_FC_SEED ? { seed: Number(process.env.CRUX_TEST_FC_SEED), path: process.env.CRUX_TEST_FC_PATH } : {}),
        },
      );
      expect(damaged).toBeGreaterThan(0);
    },
    // ~0.1 CPU-s a history; room for a loaded machine.
    Math.max(TIMEOUT, RUNS * 1_500),
  );
});
