// given(a store where well over 16 sessions share one updated time: an import, a fixed clock) → when(a limited
// `session list`, with each filter and format) → then(the first rows of the replay's list: ties by stored id,
// whichever of them the index holds first), on both engines.
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listNewest } from '../../../src/domain/session/newest-list';
import { importSessions, listStoredSessions, touchSession } from '../../../src/domain/session/store';
import type { LogicalSessionId } from '../../../src/shared/ids';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { describeEachStore, freshStore, tempDir } from '../../helpers/cli';
import { crux } from '../../helpers/run-cli';

const T = Date.parse('2026-12-01T12:00:00.000Z');
const at = (ms: number) => new Date(ms).toISOString();
const NOW = ['--now', at(T + 3_600_000)];
/** Long after every time: every open session is stale (--stranded). */
const LATER = ['--now', at(T + 30 * 86_400_000)];

/**
 * Three newer sessions, then 120 unscoped (a quarter closed) and 60 of agent `a` at one time, then 40 older ones:
 * the ids' order is not their key hashes' (nor the order they were written in).
 */
function lines(): string[] {
  const out: object[] = [];
  const id = (i: number) => `s${String((i * 7919) % 1000).padStart(3, '0')}-${i}`;
  for (let i = 0; i < 3; i++) out.push({ session_id: `new${i}`, state: { i }, updated_at: at(T + (i + 1) * 60_000) });
  for (let i = 0; i < 120; i++) out.push({ session_id: id(i), state: { i }, updated_at: at(T), ...(i % 4 === 0 ? { status: 'closed' } : {}) });
  for (let i = 120; i < 180; i++) out.push({ session_id: id(i), agent: 'a', state: { i }, updated_at: at(T), ...(i % 3 === 0 ? { status: 'closed' } : {}) });
  for (let i = 0; i < 40; i++) out.push({ session_id: `old${i}`, state: { i }, updated_at: at(T - (i + 1) * 60_000) });
  return out.map((l) => JSON.stringify(l));
}

const FILTERS: string[][] = [[], ['--all'], ['--all-agents'], ['--all', '--all-agents'], ['--agent', 'a'], ['--agent', 'a', '--all'], ['--stranded', ...LATER]];
/** Within the newer ones, straddling the tie group (its first rows, or all but a few), and past it. */
const LIMITS = [2, 5, 30, 150];

/** The rows as a reader sees them: --json's sessions (agent/id) and how many it hides, or the table's lines. */
function rows(out: string, json: boolean): string[] {
  if (!json) {
    // The table's last line says how many scoped sessions it hides: first here, as --json's count.
    const lines = out.trimEnd().split('\n');
    return [...lines.filter((l) => l.includes(' hidden ')), ...lines.filter((l) => !l.includes(' hidden '))];
  }
  const doc = JSON.parse(out) as { sessions: { session_id: string; agent?: string | null }[]; hidden_scoped: number };
  return [`hidden ${doc.hidden_scoped}`, ...doc.sessions.map((s) => `${s.agent ?? ''}/${s.session_id}`)];
}

describeEachStore('a limited session list of tied times on %s', (kind) => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('shows the first rows of the replay: a tie group read whole where it straddles the limit, in stored-id order', async () => {
    const store = freshStore(kind);
    const imported = await crux(store, ['session', 'import', ...NOW], { input: `${lines().join('\n')}\n` });
    expect(imported.exitCode, imported.stderr).toBe(0);
    // The replay: the same store without cache/ (a data directory), listing everything.
    let replay = store;
    if (kind === 'dir') {
      replay = join(tempDir(), 'replay');
      dirs.push(replay);
      cpSync(store, replay, { recursive: true });
      rmSync(join(replay, 'cache'), { recursive: true, force: true });
    }
    for (const filter of FILTERS) {
      const args = ['session', 'list', ...(filter.includes('--now') ? [] : NOW), ...filter];
      for (const json of [true, false]) {
        const format = json ? ['--json'] : [];
        if (kind === 'dir') rmSync(join(replay, 'cache'), { recursive: true, force: true });
        const whole = await crux(replay, [...args, ...format, '--limit', '0']);
        expect(whole.exitCode, whole.stderr).toBe(0);
        const all = rows(whole.stdout, json);
        // The lines before the rows: the count of those hidden (--json's always), the table's header.
        const lead = json ? 1 : 1 + all.filter((l) => l.includes(' hidden ')).length;
        for (const limit of LIMITS) {
          const what = `${filter.join(' ')}${json ? ' --json' : ''} --limit ${limit}`;
          const limited = await crux(store, [...args, ...format, '--limit', String(limit)]);
          expect(limited.exitCode, `${what}: ${limited.stderr}`).toBe(0);
          // How many it hides, then (piped) the table's header and its rows.
          expect(rows(limited.stdout, json), what).toEqual(all.slice(0, lead + limit));
        }
      }
    }
  });
});

describeEachStore('a limited session list of tied Unicode ids on %s', (kind) => {
  it('orders ties as a replay does, by UTF-16 units: an id with a character above U+FFFF before one of U+E000–U+FFFF', async () => {
    const store = freshStore(kind);
    const ids = [
      ...Array.from({ length: 100 }, (_, i) => `x\uFF21${String(i).padStart(3, '0')}`),
      ...Array.from({ length: 30 }, (_, i) => `x\u{1F600}${String(i).padStart(3, '0')}`),
    ];
    const input = [
      ...['n1', 'n2', 'n3'].map((id, i) => ({ session_id: id, state: {}, updated_at: at(T + (i + 1) * 1000) })),
      ...ids.map((id) => ({ session_id: id, state: {}, updated_at: at(T) })),
    ];
    const imported = await crux(store, ['session', 'import', ...NOW], { input: `${input.map((l) => JSON.stringify(l)).join('\n')}\n` });
    expect(imported.exitCode, imported.stderr).toBe(0);
    const replay = ['n3', 'n2', 'n1', ...[...ids].sort()];
    expect(replay[3]).toBe('x\u{1F600}000');
    for (const limit of [5, 40, 70, 140]) {
      const got = await crux(store, ['session', 'list', ...NOW, '--json', '--limit', String(limit)]);
      expect(got.exitCode, got.stderr).toBe(0);
      expect(rows(got.stdout, true).slice(1), `${limit}`).toEqual(replay.slice(0, limit).map((id) => `/${id}`));
    }
  });
});

describe('a limited list of tied times on a data directory, read by the index', () => {
  const FILTER = { all: false, archived: false, stranded: false, allAgents: false };
  /** 20 newer sessions, then 600 at one time (an import's), then 100 older ones; `ties` more at that time in a second import. */
  async function seeded(path: string, from: number, to: number): Promise<DataDir> {
    const dir = new DataDir(path, { warn: () => {} }, 5_000);
    const line = (id: string, ms: number) => JSON.stringify({ session_id: id, state: {}, updated_at: at(ms) });
    const all = [
      ...Array.from({ length: 20 }, (_, i) => line(`new${String(i).padStart(2, '0')}`, T + (i + 1) * 1000)),
      ...Array.from({ length: 700 }, (_, i) => line(`tie${String((i * 7919) % 700).padStart(3, '0')}`, T)),
      ...Array.from({ length: 100 }, (_, i) => line(`old${i}`, T - (i + 1) * 1000)),
    ];
    await importSessions({ dir, agent: undefined, now: T }, Buffer.from(`${all.slice(from, to).join('\n')}\n`), { maxStateBytes: 1 << 20 });
    return dir;
  }
  /** The limited list, and how many sessions its read folded. */
  async function limited(dir: DataDir, limit: number) {
    let read = 0;
    const counting = Object.create(dir) as JournalStore;
    counting.readNewest = async (spec, query, enough) => {
      const got = await dir.readNewest(spec, query, enough);
      if (query.index.startsWith('unscoped_')) read += (got.state as Map<string, unknown>).size;
      return got;
    };
    const got = await listNewest({ dir: counting, agent: undefined, now: T }, FILTER, limit);
    expect(got, `${limit}`).toBeDefined();
    return { ids: got!.sessions.map((s) => s.session_id), read };
  }
  const replay = async (dir: DataDir) => (await listStoredSessions({ dir, agent: undefined, now: T }, FILTER)).sessions.map((s) => s.session_id);

  it('reads a tie group in stored-id order only as far as the limit (the index orders it by key hash)', async () => {
    const dir = await seeded(join(tempDir(), 'data'), 0, 820);
    const whole = await replay(dir);
    expect(whole.slice(19, 23)).toEqual(['new00', 'tie000', 'tie001', 'tie002']);
    for (const limit of [5, 18, 20, 21, 25, 100, 620, 700, 750]) {
      const got = await limited(dir, limit);
      expect(got.ids, `${limit}`).toEqual(whole.slice(0, limit));
      // Before the group: about the rows shown, never the group's 700. In it: about the rows shown too (it read
      // all 720 before the group had an order by id in the index).
      if (limit <= 20) expect(got.read, `${limit}`).toBeLessThanOrEqual(20);
      expect(got.read, `${limit}`).toBeLessThanOrEqual(Math.min(limit, 720) + 40);
    }
  });

  it('reads the ids of a long shared stem, statuses and other times among them, as a replay lists them', async () => {
    const dir = new DataDir(join(tempDir(), 'data'), { warn: () => {} }, 5_000);
    // 400 ids that share 12 characters at one time (a quarter closed), 300 more at each of many other times
    // (some share the first's tag), one id that is a prefix of others.
    const line = (id: string, ms: number, closed: boolean) =>
      JSON.stringify({ session_id: id, state: {}, updated_at: at(ms), ...(closed ? { status: 'closed' } : {}) });
    const all = [
      ...Array.from({ length: 400 }, (_, i) => line(`session-${String((i * 7919) % 400).padStart(4, '0')}`, T, i % 4 === 0)),
      line('session-', T, false),
      ...Array.from({ length: 300 }, (_, i) => line(`other-${String(i).padStart(3, '0')}`, T - (1 + (i % 150)) * 1000, false)),
    ];
    await importSessions({ dir, agent: undefined, now: T }, Buffer.from(`${all.join('\n')}\n`), { maxStateBytes: 1 << 20 });
    const whole = await replay(dir);
    expect(whole[0]).toBe('session-');
    for (const limit of [1, 17, 40, 299, 301, 305, 700]) {
      const got = await limited(dir, limit);
      expect(got.ids, `${limit}`).toEqual(whole.slice(0, limit));
    }
    const closed = (await listStoredSessions({ dir, agent: undefined, now: T }, { ...FILTER, all: true })).sessions
      .filter((s) => s.status === 'closed')
      .map((s) => s.session_id);
    expect(closed).toHaveLength(100);
    for (const limit of [1, 20, 99]) {
      const got = await listNewest({ dir, agent: undefined, now: T }, { ...FILTER, all: true }, limit, { statuses: ['closed'] });
      expect(
        got?.sessions.map((s) => s.session_id),
        `closed ${limit}`,
      ).toEqual(closed.slice(0, limit));
    }
  });

  it('reads a group too large to keep from the index by id too, each candidate checked against its own lines', async () => {
    const dir = new DataDir(join(tempDir(), 'data'), { warn: () => {} }, 5_000);
    // 5,200 sessions at one time, every fifth closed (more than loadNewest keeps of a group from the index), and
    // 60 at other times, newer and older.
    const line = (id: string, ms: number, closed: boolean) =>
      JSON.stringify({ session_id: id, state: {}, updated_at: at(ms), ...(closed ? { status: 'closed' } : {}) });
    const all = [
      ...Array.from({ length: 5200 }, (_, i) => line(`t${String((i * 7919) % 5200).padStart(4, '0')}x`, T, i % 5 === 0)),
      ...Array.from({ length: 60 }, (_, i) => line(`o${i}`, T + (i - 30) * 1000, false)),
    ];
    await importSessions({ dir, agent: undefined, now: T }, Buffer.from(`${all.join('\n')}\n`), { maxStateBytes: 1 << 20 });
    const whole = await replay(dir);
    for (const limit of [25, 31, 80]) {
      const got = await limited(dir, limit);
      expect(got.ids, `${limit}`).toEqual(whole.slice(0, limit));
      expect(got.read, `${limit}`).toBeLessThanOrEqual(limit + 40);
    }
    const closed = (await listStoredSessions({ dir, agent: undefined, now: T }, { ...FILTER, all: true })).sessions
      .filter((s) => s.status === 'closed')
      .map((s) => s.session_id);
    const got = await listNewest({ dir, agent: undefined, now: T }, { ...FILTER, all: true }, 20, { statuses: ['closed'] });
    expect(got?.sessions.map((s) => s.session_id)).toEqual(closed.slice(0, 20));
  });

  it('follows sessions that left the tie group or joined it since (their entries in the index log)', async () => {
    const dir = await seeded(join(tempDir(), 'data'), 0, 820);
    const touch = (id: string, ms: number) => touchSession({ dir, agent: undefined, now: ms }, id as LogicalSessionId);
    // 30 of the group move up (newer than it, older than the newer ones), 10 older ones join it, 10 stay with a new write.
    for (let i = 0; i < 30; i++) await touch(`tie${String(i * 23).padStart(3, '0')}`, T + 500);
    for (let i = 0; i < 10; i++) await touch(`old${i * 7}`, T);
    for (let i = 0; i < 10; i++) await touch(`tie${String(5 + i * 31).padStart(3, '0')}`, T);
    const whole = await replay(dir);
    expect(whole).toContain('old7');
    for (const limit of [20, 49, 50, 51, 60, 100, 745, 760]) {
      const got = await limited(dir, limit);
      expect(got.ids, `${limit}`).toEqual(whole.slice(0, limit));
      expect(got.read, `${limit}`).toBeLessThanOrEqual(Math.min(limit, 760) + 40);
    }
  });

  it('merges ties written past the index (a cache/ restored from before them) in stored-id order', async () => {
    const path = join(tempDir(), 'data');
    await seeded(path, 0, 400);
    const saved = `${path}.cache`;
    cpSync(join(path, 'cache'), saved, { recursive: true });
    const dir = await seeded(path, 400, 820);
    rmSync(join(path, 'cache'), { recursive: true, force: true });
    cpSync(saved, join(path, 'cache'), { recursive: true });
    const got = await limited(dir, 25);
    rmSync(join(path, 'cache'), { recursive: true, force: true });
    expect(got.ids).toEqual((await replay(new DataDir(path, { warn: () => {} }, 5_000))).slice(0, 25));
  });
});

const FILTER_ALL = { all: false, archived: false, stranded: false, allAgents: false };

describe('limited lists of random tie groups on a data directory', () => {
  it('equal the replay for every filter and limit: ids with shared stems, statuses, agents, writes since the import', async () => {
    let seed = 7;
    const rand = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const pick = <X>(xs: readonly X[]): X => xs[Math.floor(rand() * xs.length)]!;
    const STEMS = ['session-', 'a', 'ab', 'x\u00e9', 's1234'];
    const STATUSES = ['active', 'active', 'closed', 'handed_off', 'archived'] as const;
    for (let round = 0; round < 6; round++) {
      const dir = new DataDir(join(tempDir(), `data${round}`), { warn: () => {} }, 5_000);
      const times = [T, T + 1000, T - 1000, T + 2000 + round];
      const ids = new Set<string>();
      while (ids.size < 120 + round * 40) ids.add(`${pick(STEMS)}${Math.floor(rand() * 5000)}`);
      const input = [...ids].map((id) =>
        JSON.stringify({
          session_id: id,
          state: {},
          updated_at: at(pick(times)),
          status: pick(STATUSES),
          ...(rand() < 0.2 ? { agent: pick(['a', 'b']) } : {}),
        }),
      );
      await importSessions({ dir, agent: undefined, now: T }, Buffer.from(`${input.join('\n')}\n`), { maxStateBytes: 1 << 20 });
      // Some sessions written since (the index log): moved to another time of the groups.
      for (const id of [...ids].filter(() => rand() < 0.1))
        await touchSession({ dir, agent: undefined, now: pick(times) }, id as LogicalSessionId).catch(() => undefined);
      for (const allAgents of [false, true]) {
        for (const all of [false, true]) {
          const f = { ...FILTER_ALL, all, allAgents };
          const whole = (await listStoredSessions({ dir, agent: undefined, now: T }, f)).sessions.map((s) => s.session_id);
          for (const limit of [1, 17, 40, 90]) {
            const got = await listNewest({ dir, agent: undefined, now: T }, f, limit);
            expect(
              got?.sessions.map((s) => s.session_id),
              `${round} ${all} ${allAgents} ${limit}`,
            ).toEqual(whole.slice(0, limit));
          }
        }
        for (const status of ['closed', 'active'] as const) {
          const f = { ...FILTER_ALL, all: true, allAgents };
          const whole = (await listStoredSessions({ dir, agent: undefined, now: T }, f)).sessions.filter((s) => s.status === status).map((s) => s.session_id);
          for (const limit of [1, 17, 40]) {
            const got = await listNewest({ dir, agent: undefined, now: T }, f, limit, { statuses: [status] });
            expect(
              got?.sessions.map((s) => s.session_id),
              `${round} ${status} ${allAgents} ${limit}`,
            ).toEqual(whole.slice(0, limit));
          }
        }
      }
    }
  });
});
