// given(a data directory of ids that share a long stem, `session-N`) → when(completion of a prefix) → then(the
// ids a replay gives, read through the index by the prefix: the sessions read are about the answer, not the scope).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sessionIdsStartingWith, importSessions, type SessionScope } from '../../../src/domain/session/store';
import { DataDir } from '../../../src/journal/dir/data-dir';
import type { AgentName } from '../../../src/shared/ids';
import { tempDir } from '../../helpers/cli';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import { SESSION_STORE } from '../../../src/domain/session/fold';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import { freshStoreUrl, pgSkipReason } from '../../helpers/pg';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const quiet = { warn: () => {} };
const N = 1500;

/** The journals alone, copied to a fresh directory (no cache/): what a replay answers. */
function journalsOnly(root: string): DataDir {
  const copy = join(tempDir(), 'truth');
  fs.mkdirSync(copy, { mode: 0o700 });
  for (const f of fs.readdirSync(root)) if (f.endsWith('.jsonl')) fs.copyFileSync(join(root, f), join(copy, f));
  return new DataDir(copy, quiet, 5_000);
}

async function seeded<D extends JournalStore = DataDir>(dir: D = new DataDir(join(tempDir(), 'data'), quiet, 5_000) as unknown as D): Promise<D> {
  for (const agent of [undefined, 'a', 'b'] as (AgentName | undefined)[]) {
    const lines = Array.from({ length: N }, (_, i) =>
      JSON.stringify({ session_id: `session-${i}`, state: { i }, updated_at: new Date(NOW - i * 1000).toISOString() }),
    );
    await importSessions({ dir, agent, now: NOW }, Buffer.from(`${lines.join('\n')}\n`), { maxStateBytes: 1 << 20 });
  }
  return dir;
}

/** The ids completion gives, and how many sessions its read by prefix folded. */
async function complete(dir: JournalStore, agent: AgentName | undefined, prefix: string, max: number): Promise<{ ids: string[]; read: number }> {
  let read = 0;
  const counting = Object.create(dir) as JournalStore;
  counting.readPrefix = async (spec, query, enough) => {
    const state = await dir.readPrefix!(spec, query, enough);
    read += (state as Map<string, unknown>).size;
    return state;
  };
  const scope: SessionScope = { dir: counting, agent, now: NOW };
  return { ids: await sessionIdsStartingWith(scope, prefix, max), read };
}

describe('completion of session ids by prefix', () => {
  it('answers as a replay does, for every scope, prefix length and screenful', async () => {
    const dir = await seeded();
    const truth = journalsOnly(dir.root);
    expect(fs.existsSync(join(dir.root, 'cache'))).toBe(true);
    for (const agent of [undefined, 'a', 'nobody'] as (AgentName | undefined)[]) {
      for (const prefix of ['', 's', 'session-', 'session-1', 'session-14', 'session-149', 'session-1499', 'session-1499x', 'session-7', 'x']) {
        for (const max of [1, 5, 200]) {
          const got = await complete(dir, agent, prefix, max);
          const want = await complete(truth, agent, prefix, max);
          expect(got.ids, `${agent} ${prefix} ${max}`).toEqual(want.ids);
          const all = Array.from({ length: N }, (_, i) => `session-${i}`)
            .filter((id) => agent !== 'nobody' && id.startsWith(prefix))
            .sort()
            .slice(0, max);
          expect(got.ids, `${agent} ${prefix} ${max}`).toEqual(all);
        }
      }
    }
  });

  it('reads the sessions that share a long prefix, not every session whose id shares its first characters', async () => {
    const dir = await seeded();
    // 4,500 sessions start with "session-"; "session-1499" is one of them, "session-14" eleven (and 100 more).
    expect((await complete(dir, 'a' as AgentName, 'session-1499', 200)).read).toBeLessThan(20);
    expect((await complete(dir, undefined, 'session-149', 200)).read).toBeLessThan(40);
    expect((await complete(dir, 'b' as AgentName, 'session-14', 200)).read).toBeLessThan(200);
  });

  it('reads a short prefix of ids that share a long stem as far as the answer, not the whole stem', async () => {
    const dir = await seeded();
    // Every id of a scope ties on the first 7 bytes of `!session-…`: read deeper, in order, as far as a screenful.
    const reads: Record<string, number> = {};
    for (const agent of [undefined, 'a'] as (AgentName | undefined)[]) {
      for (const [prefix, max] of [
        ['s', 5],
        ['sess', 200],
        ['session', 200],
        ['', 20],
      ] as const) {
        const got = await complete(dir, agent, prefix, max);
        reads[`${agent} ${prefix} ${max}`] = got.read;
        expect(got.ids).toEqual(
          Array.from({ length: N }, (_, i) => `session-${i}`)
            .sort()
            .slice(0, max),
        );
      }
    }
    for (const [what, read] of Object.entries(reads)) expect(read, what).toBeLessThan(Number(what.split(' ')[2]) + 400);
  });
});

describe.skipIf(pgSkipReason() !== undefined)('completion of session ids by prefix on PostgreSQL', () => {
  it('answers as a replay does, reading through the index rows only the sessions of the answer', async () => {
    const store = await seeded(
      new PgStore(parseStoreUrl(freshStoreUrl('complete')), { reporter: quiet, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: [SESSION_STORE] }),
    );
    try {
      // A read by prefix of its own (else completion folds the scope as a listing does).
      expect(typeof store.readPrefix).toBe('function');
      for (const agent of [undefined, 'a', 'nobody'] as (AgentName | undefined)[]) {
        for (const prefix of ['', 's', 'session-', 'session-1', 'session-149', 'session-1499x', 'x']) {
          for (const max of [1, 200]) {
            const got = await complete(store, agent, prefix, max);
            const all = Array.from({ length: N }, (_, i) => `session-${i}`)
              .filter((id) => agent !== 'nobody' && id.startsWith(prefix))
              .sort()
              .slice(0, max);
            expect(got.ids, `${agent} ${prefix} ${max}`).toEqual(all);
            // A page of index rows (256), not the 1,500 sessions of a scope (nor the 4,500 of the store).
            expect(got.read, `${agent} ${prefix} ${max}`).toBeLessThanOrEqual(256);
          }
        }
      }
    } finally {
      await store.close();
    }
  });
});
