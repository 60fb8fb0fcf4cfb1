// Entities whose keys share the index's 56-bit hash: every read through the index (by key, by a query's
// candidates, newest first, by prefix) answers as a replay does. The hash is cut to a few bits for this file
// (CRUX_TEST_HASH56_BITS, read when entries.ts loads), so that every session id collides with others.
import * as fs from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.CRUX_TEST_HASH56_BITS = '0';
  // Small logs and partitions: entries move through the log, frozen runs and merged partitions.
  process.env.CRUX_TEST_INDEX_LOG_ENTRIES = '6';
});

import { DataDir } from '../../../src/journal/dir/data-dir';
import { hash56 } from '../../../src/journal/derived/entries';
import { CruxError } from '../../../src/shared/errors';
import * as sessions from '../../../src/domain/session/store';
import { listNewest } from '../../../src/domain/session/newest-list';
import type { AgentName, LogicalSessionId } from '../../../src/shared/ids';
import { propertyRuns, tempDir } from '../../helpers/cli';

const START = Date.parse('2026-12-01T00:00:00Z');
const HOUR = 3_600_000;
const AGENTS = [undefined, 'a', 'b'] as (AgentName | undefined)[];
const quiet = { warn: () => {} };

/** The journals alone, copied to a fresh directory (no cache/): what a replay answers. */
function journalsOnly(root: string): DataDir {
  const copy = join(tempDir(), 'truth');
  fs.mkdirSync(copy, { mode: 0o700 });
  for (const f of fs.existsSync(root) ? fs.readdirSync(root) : []) if (f.endsWith('.jsonl')) fs.copyFileSync(join(root, f), join(copy, f));
  return new DataDir(copy, quiet, 5_000);
}

async function answer<T>(fn: () => Promise<T>): Promise<T | { error: string }> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof CruxError) return { error: error.kind };
    throw error;
  }
}

/** Every session query's answer at `now`: gets, an agent's list, --stranded, limited lists, completion, reap. */
async function answers(dir: DataDir, now: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const agent of AGENTS) {
    const scope = { dir, agent, now };
    for (let i = 0; i < 5; i++) out.push(await answer(() => sessions.getSession(scope, `s${i}` as LogicalSessionId)));
    if (agent !== undefined)
      out.push(await answer(() => sessions.listStoredSessions(scope, { all: true, archived: false, stranded: false, allAgents: false })));
    out.push(await answer(() => sessions.listStoredSessions(scope, { all: false, archived: false, stranded: true, allAgents: false })));
    out.push(await answer(() => sessions.reapSessions(scope, { dryRun: true })));
    out.push(await answer(() => sessions.sessionIdsStartingWith(scope, 's', 200)));
    for (const stranded of [true, false]) {
      for (const limit of [1, 2, 50])
        out.push(await answer(() => listNewest(scope, { all: false, archived: false, stranded, allAgents: agent === undefined }, limit)));
    }
  }
  return out;
}

describe('keys that share the 56-bit hash', () => {
  it('every key hashes alike here', () => {
    expect(hash56('s0')).toEqual(hash56('a/s1'));
  });

  it('a query reads every entity of a shared hash, each to its own resetting line', async () => {
    const dir = new DataDir(join(tempDir(), 'data'), quiet, 5_000);
    const old = START - 3 * 24 * HOUR;
    // Two stale sessions, one resetting line each: the later one's reset must not end the read of the hash.
    await sessions.putSession({ dir, agent: undefined, now: old }, 's0' as LogicalSessionId, { state: '{"n":0}' });
    await sessions.putSession({ dir, agent: undefined, now: old + 1 }, 's1' as LogicalSessionId, { state: '{"n":1}' });
    await sessions.putSession({ dir, agent: 'a' as AgentName, now: old + 2 }, 's2' as LogicalSessionId, { state: '{"n":2}' });
    const scope = { dir, agent: undefined, now: START };
    const stranded = await sessions.listStoredSessions(scope, { all: false, archived: false, stranded: true, allAgents: true });
    expect(stranded.sessions.map((s) => s.session_id).sort()).toEqual(['s0', 's1', 's2']);
    const newest = await listNewest(scope, { all: false, archived: false, stranded: true, allAgents: true }, 24);
    expect(newest?.sessions.map((s) => s.session_id).sort()).toEqual(['s0', 's1', 's2']);
    expect(newest?.total).toBe(3);
    expect(await answers(dir, START)).toEqual(await answers(journalsOnly(dir.root), START));
  });

  it('every answer equals a replay, through the log, frozen runs, merges and a rebuild (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            op: fc.constantFrom('put', 'put', 'close', 'delete', 'later', 'rebuild'),
            agent: fc.integer({ min: 0, max: 2 }),
            id: fc.integer({ min: 0, max: 4 }),
            ttl: fc.boolean(),
          }),
          { minLength: 3, maxLength: 20 },
        ),
        async (steps) => {
          const dir = new DataDir(join(tempDir(), 'data'), quiet, 5_000);
          let now = START - 4 * 24 * HOUR;
          for (const s of steps) {
            const scope = { dir, agent: AGENTS[s.agent], now };
            const id = `s${s.id}` as LogicalSessionId;
            try {
              if (s.op === 'put') await sessions.putSession(scope, id, { state: `{"n":${now}}`, ...(s.ttl ? { ttlMs: 30 * HOUR } : {}) });
              else if (s.op === 'close') await sessions.closeSession(scope, id, { outcome: 'completed' });
              else if (s.op === 'delete') await sessions.deleteSession(scope, id);
              else if (s.op === 'later') now += 20 * HOUR;
              // cache/ lost: the next read rebuilds the index by streaming (rebuild.ts).
              else fs.rmSync(join(dir.root, 'cache'), { recursive: true, force: true });
            } catch (error) {
              if (!(error instanceof CruxError)) throw error;
            }
            now += 60_000;
            expect(await answers(dir, now + 2 * 24 * HOUR)).toEqual(await answers(journalsOnly(dir.root), now + 2 * 24 * HOUR));
          }
        },
      ),
      { numRuns: propertyRuns(40) },
    );
  }, 120_000);
});
