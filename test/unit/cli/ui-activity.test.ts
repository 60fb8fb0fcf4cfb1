// The ui's activity chart on a data directory (src/cli/ui/overview.ts): the counts the writes keep in each keyed
// journal's index (derived/tally.ts) equal every record of the journals counted one by one, over random histories —
// clocks back and forth, closes of every outcome, cases, compactions, cache/ removed, put back behind or ahead, one of
// its files damaged — and a call reads the window's counts, not the window's records: its bytes do not grow with them.
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { contextOf } from '../../../src/cli/context';
import { closeSession, putSession } from '../../../src/cli/operations/session';
import { recordCase } from '../../../src/cli/operations/case';
import { activity } from '../../../src/cli/ui/overview';
import { activitySeries } from '../../../src/domain/activity';
import { reapSessions } from '../../../src/domain/session/store';
import { sessionScope } from '../../../src/cli/operations/scope';
import { ALL_STORES } from '../../../src/domain/stores';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { parseLogicalSessionId } from '../../../src/shared/ids';
import { freshDataDir, tempDir } from '../../helpers/cli';

const T = Date.parse('2026-11-30T12:00:00.000Z');
const HOUR = 3_600_000;
const scope = { globals: {}, env: {} };
const at = (dataDir: string, now: number) => contextOf({ dataDir, now: new Date(now).toISOString() }, {}, () => {});
const CASE = { task: 'deploy the cache', context: null, action: 'make deploy', outcome: 'deployed', reward: 1, tags: ['deploy'], source_receipt: null };

/** The chart as every record of the journals counts (read whole, forward): what a replay of them counts. */
function counted(dir: string, now: number, days = 7) {
  const first = Math.floor((now - days * 24 * HOUR) / HOUR) * HOUR + HOUR;
  const hours = Array.from({ length: days * 24 }, (_, i) => ({
    hour: new Date(first + i * HOUR).toISOString(),
    puts: 0,
    closes: 0,
    failed: 0,
    reaps: 0,
    handoffs: 0,
    cases: 0,
  }));
  for (const file of ['sessions.jsonl', 'cases.jsonl', 'handoffs.jsonl']) {
    if (!existsSync(join(dir, file))) continue;
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      if (line === '') continue;
      const r = JSON.parse(line);
      const series = activitySeries(r.ev, r.data?.outcome);
      const i = Math.floor((Date.parse(r.ts) - first) / HOUR);
      if (series !== undefined && i >= 0 && i < hours.length) hours[i]![series] += 1;
    }
  }
  return hours;
}

// The module object crux's own `fs` calls go through (an ES import's namespace cannot be spied on).
const nodeFs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

/** The bytes read (journals and cache/) while `fn` runs. */
async function bytesRead(fn: () => Promise<unknown>): Promise<number> {
  let bytes = 0;
  const read = nodeFs.readSync;
  vi.spyOn(nodeFs, 'readSync').mockImplementation(((...args: Parameters<typeof read>) => {
    const n = read(...args);
    bytes += n;
    return n;
  }) as typeof read);
  try {
    await fn();
  } finally {
    vi.restoreAllMocks();
  }
  return bytes;
}

/** A small deterministic generator (mulberry32): a history per seed. */
function random(seed: number) {
  let a = seed >>> 0;
  return (n: number) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

afterEach(() => {
  vi.restoreAllMocks();
  delete process.env.CRUX_TEST_INDEX_LOG_ENTRIES;
});

describe('the activity chart from the counts the writes keep', () => {
  it('equals every record counted, over random histories and every state of cache/', async () => {
    for (let seed = 1; seed <= 6; seed++) {
      const rnd = random(seed);
      // Half the histories freeze and merge the index every few entries.
      if (seed % 2 === 0) process.env.CRUX_TEST_INDEX_LOG_ENTRIES = '8';
      else delete process.env.CRUX_TEST_INDEX_LOG_ENTRIES;
      const dir = freshDataDir();
      const cache = join(dir, 'cache');
      const saved = join(tempDir(), 'saved');
      let clock = T - 3 * 24 * HOUR;
      for (let step = 0; step < 60; step++) {
        // Mostly forward, sometimes back (another host's clock, --now): records of an hour together, a few hours apart.
        clock += (rnd(40) - 8) * 3 * 60_000 + (rnd(10) === 0 ? -12 * HOUR : 0);
        const ctx = at(dir, clock);
        const id = parseLogicalSessionId(`s${rnd(30)}`);
        const op = rnd(20);
        const what = `seed ${seed} step ${step} op ${op}`;
        if (op < 9) await putSession(ctx, id, { state: `{"n":${step}}` }).catch(() => undefined);
        else if (op < 12) await closeSession(ctx, id, { outcome: (['completed', 'failed', 'abandoned'] as const)[rnd(3)]! }).catch(() => undefined);
        else if (op < 13) await reapSessions(sessionScope(at(dir, clock + 40 * 24 * HOUR)), { dryRun: false });
        else if (op < 15) await recordCase(ctx, { ...CASE, success: rnd(2) === 0 });
        else if (op === 15) await new DataDir(dir, { warn: () => {} }, 5_000).compact(ALL_STORES, new Date(clock).toISOString());
        else if (op === 16 && existsSync(cache)) {
          rmSync(saved, { recursive: true, force: true });
          cpSync(cache, saved, { recursive: true });
        } else if (op === 17 && existsSync(saved)) {
          // Behind (saved before later writes) or ahead (saved before a compaction that shortened the journal).
          rmSync(cache, { recursive: true, force: true });
          cpSync(saved, cache, { recursive: true });
        } else if (op === 18) rmSync(cache, { recursive: true, force: true });
        else if (op === 19 && existsSync(cache)) {
          const files = readdirSync(cache).filter((f) => f.includes('.idx'));
          const file = files[rnd(Math.max(1, files.length))];
          if (file !== undefined) {
            const bytes = readFileSync(join(cache, file));
            if (bytes.length > 0) {
              bytes[rnd(bytes.length)]! ^= 1 << rnd(8);
              writeFileSync(join(cache, file), bytes);
            }
          }
        }
        if (step % 6 === 5 || op >= 15) {
          const now = clock + rnd(48) * HOUR;
          const days = 1 + rnd(9);
          const got = await activity(at(dir, now), scope, String(days));
          expect(got.hours, what).toEqual(counted(dir, now, days));
        }
      }
    }
  });

  it('reads the window’s counts, not its records: the bytes a call reads do not grow with them', async () => {
    const dir = freshDataDir();
    const state = JSON.stringify({ note: 'x'.repeat(4000) });
    const put = (i: number) => putSession(at(dir, T - 50 * HOUR + i * 30_000), parseLogicalSessionId(`s${i}`), { state });
    for (let i = 0; i < 100; i++) await put(i);
    // The first call may build what an index lacks; the next ones read it as it stands.
    await activity(at(dir, T), scope, undefined);
    const small = await bytesRead(() => activity(at(dir, T), scope, undefined));
    for (let i = 100; i < 500; i++) await put(i);
    await activity(at(dir, T), scope, undefined);
    const large = await bytesRead(() => activity(at(dir, T), scope, undefined));
    const journal = readFileSync(join(dir, 'sessions.jsonl')).length;
    expect((await activity(at(dir, T), scope, undefined)).hours).toEqual(counted(dir, T));
    expect(journal).toBeGreaterThan(1_000_000);
    // Five times the records in the window: the same pages of counts, a log of a bounded size, the head's line.
    expect(large).toBeLessThan(journal / 20);
    expect(large).toBeLessThan(small * 1.5 + 64 * 1024);
  });
});
