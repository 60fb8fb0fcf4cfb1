// given(a data directory of sessions of every status) → when(a limited `session list --all`) → then(the rows a
// replay gives, read newest first through the index: the sessions read are about the rows shown, not the store).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importSessions, listStoredSessions, type SessionScope } from '../../../src/domain/session/store';
import { listNewest } from '../../../src/domain/session/newest-list';
import { DataDir } from '../../../src/journal/dir/data-dir';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import type { AgentName } from '../../../src/shared/ids';
import { tempDir } from '../../helpers/cli';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const N = 1500;
const ALL = { all: true, archived: false, stranded: false, allAgents: false };

async function seeded(): Promise<DataDir> {
  const dir = new DataDir(join(tempDir(), 'data'), { warn: () => {} }, 5_000);
  for (const agent of [undefined, 'a'] as (AgentName | undefined)[]) {
    // Mostly closed (as a long-lived store is), some active, the times interleaved across statuses.
    const lines = Array.from({ length: N }, (_, i) =>
      JSON.stringify({
        session_id: `s${i}`,
        state: { i },
        ...(i % 5 === 0 ? {} : { status: 'closed' }),
        updated_at: new Date(NOW - ((i * 7919) % N) * 60_000).toISOString(),
      }),
    );
    await importSessions({ dir, agent, now: NOW }, Buffer.from(`${lines.join('\n')}\n`), { maxStateBytes: 1 << 20 });
  }
  return dir;
}

describe('a limited list of every status (--all)', () => {
  it('answers as the whole listing does, reading about the rows it shows', async () => {
    const dir = await seeded();
    let read = 0;
    const counting = Object.create(dir) as JournalStore;
    counting.readNewest = async (spec, query, enough) => {
      const got = await dir.readNewest(spec, query, enough);
      read += (got.state as Map<string, unknown>).size;
      return got;
    };
    for (const [agent, allAgents] of [
      [undefined, false],
      [undefined, true],
      ['a', true],
    ] as const) {
      const scope: SessionScope = { dir: counting, agent: agent as AgentName | undefined, now: NOW };
      for (const limit of [1, 10, 50]) {
        read = 0;
        const filter = { ...ALL, allAgents };
        const limited = await listNewest(scope, filter, limit);
        expect(limited, `${agent} ${allAgents} ${limit}`).toBeDefined();
        const whole = await listStoredSessions({ ...scope, dir }, filter);
        expect(limited!.sessions.map((s) => [s.agent, s.session_id])).toEqual(whole.sessions.slice(0, limit).map((s) => [s.agent, s.session_id]));
        expect(limited!.total).toBe(whole.sessions.length);
        expect(limited!.hidden_scoped).toBe(whole.hidden_scoped);
        expect(read, `${agent} ${allAgents} ${limit}`).toBeLessThan(limit + 100);
      }
    }
  });
});
