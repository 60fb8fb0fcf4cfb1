// given(a store where well over 16 sessions share one updated time: an import, a fixed clock) → when(a limited
// `session list`, with each filter and format) → then(the first rows of the replay's list: ties by stored id,
// whichever of them the index holds first), on both engines.
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
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
  if (!json) return out.trimEnd().split('\n');
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
        for (const limit of LIMITS) {
          const what = `${filter.join(' ')}${json ? ' --json' : ''} --limit ${limit}`;
          const limited = await crux(store, [...args, ...format, '--limit', String(limit)]);
          expect(limited.exitCode, `${what}: ${limited.stderr}`).toBe(0);
          // Piped, the table's header and then its rows; --json, how many it hides and then its rows.
          expect(rows(limited.stdout, json), what).toEqual(all.slice(0, limit + 1));
        }
      }
    }
  });
});
