// given(a data directory of sessions of every status, freshness, expiry and close outcome, its cache/ current,
// behind its journal, or missing) → when(the overview's counts, a limited --status / --archived list) → then(what
// a replay of every session gives, counted from the index: the sessions read are the few shown, not the store).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importSessions, listStoredSessions, type SessionScope } from '../../../src/domain/session/store';
import { countSessions, FRESHNESS_ORDER, ordered } from '../../../src/domain/session/counts';
import { listNewest } from '../../../src/domain/session/newest-list';
import { DEFAULT_ATTENTION, judgeAttention } from '../../../src/domain/session/attention';
import { SESSION_STATES, type SessionStatus } from '../../../src/domain/session/machine';
import { DataDir } from '../../../src/journal/dir/data-dir';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import type { AgentName } from '../../../src/shared/ids';
import { tempDir } from '../../helpers/cli';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const ALL = { all: true, archived: false, stranded: false, allAgents: true };

/** `n` sessions of `agent`, their times, statuses, expiries and outcomes spread (every attention item has some). */
function lines(n: number, agent: string | null, from: number): string {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    const status = SESSION_STATES[i % 4]!;
    // Minutes from 3 days ago to 10 minutes ahead (fresh, aging, stale, invalid), a tie every 7th.
    const updated = i % 7 === 0 ? NOW - 90 * MIN : NOW - ((i * 7919) % 4330) * MIN + 10 * MIN;
    return JSON.stringify({
      session_id: `s${i}`,
      agent,
      state: { i },
      status,
      ...(i % 11 === 0 ? {} : { updated_at: iso(updated) }),
      ...(status !== 'closed' && i % 3 === 0 ? { expires_at: iso(NOW + ((i % 9) - 4) * 20 * MIN) } : {}),
      ...(status === 'closed' ? { outcome: ['completed', 'failed', 'abandoned'][i % 3], closed_at: iso(NOW - (i % 13) * 24 * 60 * MIN) } : {}),
    });
  }).join('\n');
}

async function seeded(root: string, n: number, from = 0): Promise<DataDir> {
  const dir = new DataDir(root, { warn: () => {} }, 5_000);
  for (const agent of [null, 'a'] as const) {
    await importSessions({ dir, agent: undefined, now: NOW }, Buffer.from(`${lines(n, agent, from)}\n`), { maxStateBytes: 1 << 20 });
  }
  return dir;
}

/** The overview's counts as a replay gives them: every session listed and counted. */
async function replayed(dir: JournalStore, now: number) {
  const { sessions } = await listStoredSessions({ dir, agent: undefined, now }, ALL);
  const byStatus: Record<string, number> = {};
  const byFreshness: Record<string, number> = {};
  for (const s of sessions) {
    byStatus[s.status] = (byStatus[s.status] ?? 0) + 1;
    if (s.freshness !== null) byFreshness[s.freshness] = (byFreshness[s.freshness] ?? 0) + 1;
  }
  return {
    total: sessions.length,
    by_status: ordered(byStatus, SESSION_STATES),
    by_freshness: ordered(byFreshness, FRESHNESS_ORDER),
    attention: judgeAttention(sessions, now, DEFAULT_ATTENTION),
  };
}

/** A store that says how many sessions its limited reads handed back. */
function counting(dir: JournalStore): { store: JournalStore; read: () => number } {
  let read = 0;
  const store = Object.create(dir) as JournalStore;
  store.readNewest = async (spec, query, enough) => {
    const got = await dir.readNewest!(spec, query, enough);
    read += (got.state as Map<string, unknown>).size;
    return got;
  };
  return { store, read: () => read };
}

describe('the overview counts sessions through the index', () => {
  it('counts as a replay does at several times, reading only the sessions it shows', async () => {
    const root = join(tempDir(), 'data');
    const dir = await seeded(root, 1200);
    for (const now of [NOW, NOW - 2 * 60 * MIN, NOW + 26 * 60 * MIN]) {
      const { store, read } = counting(dir);
      const counts = await countSessions(store, now, undefined, DEFAULT_ATTENTION);
      expect(counts, iso(now)).toEqual(await replayed(dir, now));
      // The expired, expiring and stranded ones are read whole (a few hundred here), the failures until 5: not 2,400.
      const whole = await replayed(dir, now);
      const a = whole.attention;
      expect(read(), iso(now)).toBeLessThanOrEqual(a.expired_unreaped.count + a.expiring_soon.count + a.stranded.count + 40);
    }
  });

  it('equals a replay when cache/ is behind its journal, or missing', async () => {
    const root = join(tempDir(), 'data');
    let dir = await seeded(root, 300);
    await countSessions(dir, NOW, undefined, DEFAULT_ATTENTION);
    const saved = join(tempDir(), 'saved');
    fs.cpSync(join(root, 'cache'), saved, { recursive: true });
    // Later writes with earlier times: the index put back from before them does not hold them.
    dir = await seeded(root, 300, 300);
    fs.rmSync(join(root, 'cache'), { recursive: true });
    fs.cpSync(saved, join(root, 'cache'), { recursive: true });
    expect(await countSessions(dir, NOW, undefined, DEFAULT_ATTENTION)).toEqual(
      await replayed(new DataDir(copyJournals(root), { warn: () => {} }, 5_000), NOW),
    );
    // Without cache/: the index is built again first (or the read replays, and says so: undefined, the caller
    // counts what it lists).
    fs.rmSync(join(root, 'cache'), { recursive: true });
    const want = await replayed(new DataDir(copyJournals(root), { warn: () => {} }, 5_000), NOW);
    expect((await countSessions(dir, NOW, undefined, DEFAULT_ATTENTION)) ?? want).toEqual(want);
    expect(await countSessions(dir, NOW, undefined, DEFAULT_ATTENTION)).toEqual(want);
  });
});

describe('a limited list of some statuses reads them through the index', () => {
  it('answers as the whole listing does (--status, --archived), with or without an agent, reading about the rows shown', async () => {
    const root = join(tempDir(), 'data');
    const dir = await seeded(root, 1200);
    const cases: [readonly SessionStatus[] | undefined, boolean][] = [
      [['closed'], false],
      [['archived'], false],
      [['active', 'handed_off'], false],
      [undefined, true],
    ];
    for (const [statuses, archived] of cases) {
      for (const allAgents of [false, true]) {
        const { store, read } = counting(dir);
        const scope: SessionScope = { dir: store, agent: undefined as AgentName | undefined, now: NOW };
        const filter = { all: statuses !== undefined, archived, stranded: false, allAgents };
        const limited = await listNewest(scope, filter, 10, { statuses });
        const what = `${statuses} ${archived} ${allAgents}`;
        expect(limited, what).toBeDefined();
        const whole = await listStoredSessions({ ...scope, dir }, filter);
        const rows = whole.sessions.filter((s) => statuses === undefined || (statuses as readonly string[]).includes(s.status));
        expect(limited!.sessions, what).toEqual(rows.slice(0, 10));
        expect(limited!.total, what).toBe(rows.length);
        expect(limited!.hidden_scoped, what).toBe(whole.hidden_scoped);
        // A tie group (every 7th session shares a time: ~90 of a status) read whole past the limit, per status: not 2,400.
        expect(read(), what).toBeLessThan(110 * (statuses?.length ?? 1));
      }
    }
  });
});

/** A copy of the journals alone (no cache/): what a replay reads. */
function copyJournals(root: string): string {
  const copy = join(tempDir(), 'replay');
  fs.mkdirSync(copy, { mode: 0o700 });
  for (const f of fs.readdirSync(root)) if (f.endsWith('.jsonl')) fs.copyFileSync(join(root, f), join(copy, f));
  return copy;
}
