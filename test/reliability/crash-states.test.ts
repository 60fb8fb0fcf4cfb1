// Crash states beyond kill -9 (issue 11 §5): every state a power cut may leave after a session put, a case
// import, a compaction and a repair (crash-states.ts builds them from an strace of the command). In each,
// every acknowledged record survives, a batch is all or nothing, `journal check` (and `--repair` where it finds
// damage) recovers a healthy store, and reads through the caches answer as the journals alone do.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDir } from '../../src/journal/dir/data-dir';
import { scanJournal } from '../../src/journal/codec/scan';
import { SESSION_STORE } from '../../src/domain/session/fold';
import { CASE_STORE } from '../../src/domain/case/store';
import { ALL_STORES } from '../../src/domain/stores';
import { freshDataDir, tempDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { figure, scaled, TIMEOUT } from './harness';
import { crashStates, materialise, readModel, toOps, TRACED, type CrashState } from './crash-states';
import { titled } from '../helpers/tools';
import { noStrace, straceCrux } from './strace';

/** What a replay of the journals alone says: sessions with status and state, and the live case ids. */
function truth(dir: string): string {
  const sessions = SESSION_STORE.initial();
  scanJournal(join(dir, SESSION_STORE.file), SESSION_STORE.vocabulary, (r, at) => SESSION_STORE.evolve(sessions, r, at));
  const cases = CASE_STORE.initial();
  scanJournal(join(dir, CASE_STORE.file), CASE_STORE.vocabulary, (r, at) => CASE_STORE.evolve(cases, r, at));
  return JSON.stringify({
    sessions: [...sessions].map(([k, v]) => `${k} ${v.status} ${v.state}`).sort(),
    cases: cases
      .liveSlots()
      .map((s) => cases.idOf(s))
      .sort(),
  });
}

const sessionsSeen = async (dd: DataDir) => JSON.stringify([...(await dd.read(SESSION_STORE))].map(([k, v]) => `${k} ${v.status} ${v.state}`).sort());
const replaySessions = (dir: string) => JSON.stringify(JSON.parse(truth(dir)).sessions);

const quiet = { warn: () => {} };
const TS = '2026-12-01T12:00:00.000Z';
type Report = Awaited<ReturnType<DataDir['check']>>;
const damaged = (report: Report) => report.some((j) => j.problems.length > 0 || j.torn_tail);

/** The checks of one crash state; undefined when it holds, else what is wanting. */
async function judge(state: CrashState, dir: string, before: string, after: string): Promise<string | undefined> {
  materialise(state.model, dir);
  const allowed = state.acked ? [after] : [before, after];
  const seen = truth(dir);
  if (!allowed.includes(seen)) return `${state.acked ? 'an acknowledged record is lost' : 'neither the state before nor after (a batch in part?)'}: ${seen}`;
  const dd = new DataDir(dir, quiet, 1000);
  // Reads before any repair: the caches (derived, maybe torn) must not change an answer.
  if ((await sessionsSeen(dd)) !== replaySessions(dir)) return `a cached read differs from the replay: ${await sessionsSeen(dd)}`;
  let report = await dd.check(ALL_STORES, { repair: false, ts: TS });
  if (damaged(report)) {
    await dd.check(ALL_STORES, { repair: true, ts: TS });
    report = await dd.check(ALL_STORES, { repair: false, ts: TS });
    if (damaged(report)) return `--repair left damage: ${JSON.stringify(report.map((j) => j.problems))}`;
  }
  const healed = truth(dir);
  if (!allowed.includes(healed)) return `after check/repair: ${healed}`;
  if ((await sessionsSeen(dd)) !== replaySessions(dir)) return 'after repair, a cached read differs from the replay';
  return undefined;
}

interface Scenario {
  readonly name: string;
  /** Builds the data directory before the traced command (durable: nothing of it is in doubt), in this process. */
  setup(dir: string): Promise<void>;
  readonly args: string[];
  readonly input?: string;
}

const put = (dir: string, id: string, state: string) => crux(dir, ['session', 'put', id, state]).then((r) => expect(r.exitCode, r.stderr).toBe(0));

const SCENARIOS: Scenario[] = [
  {
    name: 'session put',
    setup: async (dir) => {
      for (const n of [1, 2, 3]) await put(dir, `s${n}`, `{"n":${n}}`);
    },
    args: ['session', 'put', 's2', '{"n":22}'],
  },
  {
    name: 'case import (one batch)',
    setup: async (dir) => {
      expect((await crux(dir, ['case', 'record', '--task', 'seed', '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
    },
    args: ['case', 'import', '-'],
    input: `${Array.from({ length: scaled(12, 300) }, (_, i) => JSON.stringify({ task: `deploy ${i}`, action: 'ship', outcome: 'ok' })).join('\n')}\n`,
  },
  {
    name: 'first write (a new data directory)',
    setup: async () => {},
    args: ['session', 'put', 'first', '{"n":1}'],
  },
  {
    name: 'session put after a torn tail (quarantined first)',
    setup: async (dir) => {
      for (const n of [1, 2]) await put(dir, `s${n}`, `{"n":${n}}`);
      fs.appendFileSync(join(dir, 'sessions.jsonl'), '{"v":1,"seq":3,"ts":"2026-');
    },
    args: ['session', 'put', 's3', '{"n":3}'],
  },
  {
    name: 'journal compact',
    setup: async (dir) => {
      for (const n of [1, 2, 3, 4]) await put(dir, 's1', `{"n":${n}}`);
      await put(dir, 's2', '{}');
    },
    args: ['journal', 'compact'],
  },
  {
    name: 'journal check --repair',
    setup: async (dir) => {
      for (const n of [1, 2, 3]) await put(dir, `s${n}`, `{"n":${n}}`);
      const path = join(dir, 'sessions.jsonl');
      const lines = fs.readFileSync(path, 'utf8').split('\n');
      lines[1] = lines[1]!.replace('"s2"', '"sX"'); // a changed id: the hash no longer matches
      fs.writeFileSync(path, lines.join('\n'));
    },
    args: ['journal', 'check', '--repair'],
  },
];

describe('the crash-state explorer itself', () => {
  it('finds the states a wrong order leaves: a rename whose data was never fsynced, a write acknowledged before its fsync', () => {
    const start = {
      paths: new Map([
        ['', 0],
        ['j', 1],
      ]),
      data: new Map([[1, Buffer.from('old\n')]]),
      dirs: new Set([0]),
    };
    const rename = crashStates(start, [
      { k: 'create', path: 'j.tmp', ino: 2, parent: 0 },
      { k: 'write', ino: 2, off: 0, data: Buffer.from('new\n') },
      { k: 'rename', from: 'j.tmp', to: 'j', parents: [0] },
      { k: 'fsync', ino: 0 },
      { k: 'ack' },
    ]);
    const lost = rename.filter((st) => st.acked && st.model.data.get(st.model.paths.get('j')!)!.toString() !== 'new\n');
    expect(lost.map((st) => st.variant)).toContain('unsynced lost');
    const early = crashStates(start, [{ k: 'write', ino: 1, off: 4, data: Buffer.from('more\n') }, { k: 'ack' }, { k: 'fsync', ino: 1 }]);
    expect(early.some((st) => st.acked && !st.model.data.get(1)!.toString().endsWith('more\n'))).toBe(true);
    expect(early.some((st) => st.model.data.get(1)!.toString() === 'old\nmo')).toBe(true); // torn
    // The right order leaves no such state.
    const right = crashStates(start, [
      { k: 'create', path: 'j.tmp', ino: 2, parent: 0 },
      { k: 'write', ino: 2, off: 0, data: Buffer.from('new\n') },
      { k: 'fsync', ino: 2 },
      { k: 'rename', from: 'j.tmp', to: 'j', parents: [0] },
      { k: 'fsync', ino: 0 },
      { k: 'ack' },
    ]);
    expect(right.filter((st) => st.acked).map((st) => st.model.data.get(st.model.paths.get('j')!)!.toString())).toEqual(['new\n']);
  });
});

describe.skipIf(noStrace !== undefined)(titled('crash states (ALICE-style, from strace)', noStrace), { timeout: TIMEOUT }, () => {
  const totals = { scenarios: 0, operations: 0, states: 0, wanting: 0 };
  const perScenario: Record<string, { ops: number; states: number; wanting: number }> = {};
  // Default run: at most this many states per command (spread evenly over the crash points); all with CRUX_STRESS.
  const cap = scaled(30, Infinity);

  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: every acknowledged record survives every crash state, and check/repair recover`, async () => {
      const dir = freshDataDir();
      await scenario.setup(dir);
      const start = readModel(dir);
      const before = truth(dir);
      const { calls, main } = straceCrux(dir, scenario.args, { trace: TRACED, extra: ['-xx', '-s', String(64 << 20)], input: scenario.input });
      const after = truth(dir);
      const ops = toOps(calls, main, dir, start);
      expect(
        ops.some((o) => o.k === 'ack'),
        'the command printed its result',
      ).toBe(true);
      expect(
        ops.some((o) => o.k === 'write'),
        'the trace holds the writes',
      ).toBe(true);
      // A put and an import change what a replay sees; compaction and repair must not.
      if (scenario.args[0] !== 'journal') expect(after).not.toBe(before);
      else expect(after).toBe(before);
      const all = crashStates(start, ops);
      const step = Math.max(1, all.length / cap);
      const states = all.filter((_, i) => Math.floor(i / step) !== Math.floor((i - 1) / step) || i === 0);
      const wanting: string[] = [];
      const root = tempDir();
      for (const [n, state] of states.entries()) {
        const why = await judge(state, join(root, `s${n}`), before, after);
        if (why !== undefined) wanting.push(`crash after op ${state.at}/${ops.length} (${state.variant}): ${why}`);
        fs.rmSync(join(root, `s${n}`), { recursive: true, force: true });
      }
      perScenario[scenario.name] = { ops: ops.length, states: states.length, wanting: wanting.length };
      totals.scenarios += 1;
      totals.operations += ops.length;
      totals.states += states.length;
      totals.wanting += wanting.length;
      if (totals.scenarios === SCENARIOS.length) figure('crash-states', { ...totals, per_command: perScenario });
      expect(wanting.slice(0, 5), `${wanting.length} of ${states.length} crash states wanting`).toEqual([]);
    });
  }
});
