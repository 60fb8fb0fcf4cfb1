// SPEC §4: a stranded session is stale and neither closed nor archived (an archived one was parked on purpose),
// and freshness describes open sessions only: a closed one has none. One rule, in the domain, for the list,
// its index, doctor and the dashboard.
import { describe, expect, it } from 'vitest';
import { isStranded, listSessions } from '../../../src/domain/session/query';
import { viewSession } from '../../../src/domain/session/view';
import { SESSION_STORE } from '../../../src/domain/session/fold';
import { judgeSessions } from '../../../src/domain/doctor-sessions';
import type { DoctorInput, Finding } from '../../../src/domain/doctor-report';
import { ev, given, put } from './given';

const OLD = '2025-12-01T00:00:00.000Z';
const NOW = Date.parse('2026-01-01T01:00:00.000Z');

/** One session of each status, all last written a month before NOW, and a fresh one. */
const store = () =>
  given(
    { ...put('active-old'), ts: OLD },
    { ...put('handed-old'), ts: OLD },
    { ...ev('handed_off', { id: 'handed-old', handoff_id: 'h_1' }), ts: OLD },
    { ...put('archived-old'), ts: OLD },
    { ...ev('archived', { id: 'archived-old', reason: 'parked' }), ts: OLD },
    { ...put('closed-old'), ts: OLD },
    { ...ev('closed', { id: 'closed-old', outcome: 'failed', summary: null }), ts: OLD },
    { ...put('active-new'), ts: '2026-01-01T00:59:00.000Z' },
  );

describe('stranded and freshness (SPEC §4)', () => {
  it('is stale and neither closed nor archived', () => {
    const s = store();
    expect(s.get('handed-old' as never)?.status).toBe('handed_off');
    const stranded = [...s.values()].filter((r) => isStranded(r, NOW)).map((r) => r.key);
    expect(stranded.sort()).toEqual(['active-old', 'handed-old']);
  });

  it('session list --stranded leaves archived and closed sessions out', () => {
    const listed = listSessions(store(), { agent: undefined, allAgents: true, all: false, archived: false, stranded: true }, NOW);
    expect(listed.sessions.map((v) => v.session_id).sort()).toEqual(['active-old', 'handed-old']);
  });

  it('a closed session shows no freshness; every other status does', () => {
    const views = Object.fromEntries([...store().values()].map((r) => [r.key, viewSession(r, NOW).freshness]));
    expect(views).toEqual({ 'active-old': 'stale', 'handed-old': 'stale', 'archived-old': 'stale', 'closed-old': null, 'active-new': 'fresh' });
  });

  it('the stranded ranges of the index hold neither archived nor closed sessions (a total counted from it is true)', () => {
    const s = store();
    const names = SESSION_STORE.secondary!.names;
    const strandable = (key: string) => {
      const values = SESSION_STORE.secondary!.values(s, key);
      return ['strandable_updated', 'unscoped_strandable_updated'].map((n) => values[names.indexOf(n)]);
    };
    expect(strandable('archived-old')).toEqual([undefined, undefined]);
    expect(strandable('closed-old')).toEqual([undefined, undefined]);
    expect(strandable('active-old')).toEqual([Date.parse(OLD), Date.parse(OLD)]);
    expect(strandable('handed-old')[0]).toBe(Date.parse(OLD));
    // The reaper still finds an archived session by its expiry: that range is every session not closed.
    expect(names).toContain('open_expires');
  });

  it('doctor counts the same stranded sessions', () => {
    const findings: Finding[] = [];
    const report = judgeSessions(store(), { now: NOW } as DoctorInput, findings);
    expect(report.stranded_count).toBe(2);
    expect(report.stranded.map((b) => b.session_id).sort()).toEqual(['active-old', 'handed-old']);
    expect(findings.find((f) => f.code === 'stranded_sessions')?.message).toMatch(/^2 session\(s\) stranded: neither closed nor archived/);
  });
});
