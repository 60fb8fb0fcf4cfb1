// What needs an operator's attention among the sessions: each predicate, and judgeAttention's counts and order.
import { describe, expect, it } from 'vitest';
import { closedWith, DEFAULT_ATTENTION, expiresWithin, FAILED_OUTCOMES, isExpiredUnreaped, judgeAttention } from '../../../src/domain/session/attention';
import type { SessionView } from '../../../src/domain/session/view';

const NOW = Date.parse('2026-06-01T12:00:00.000Z');
const H = 3_600_000;
const at = (ms: number) => new Date(NOW + ms).toISOString();

const view = (id: string, v: Partial<SessionView>): SessionView =>
  ({
    session_id: id,
    agent: null,
    status: 'active',
    updated_at: at(0),
    expires_at: null,
    closed_at: null,
    outcome: null,
    freshness: 'fresh',
    ...v,
  }) as SessionView;

const SESSIONS = [
  view('failed-new', { status: 'closed', outcome: 'failed', closed_at: at(-H), freshness: null }),
  view('abandoned', { status: 'closed', outcome: 'abandoned', closed_at: at(-50 * H), freshness: null }),
  view('failed-old', { status: 'closed', outcome: 'failed', closed_at: at(-8 * 24 * H), freshness: null }),
  view('completed', { status: 'closed', outcome: 'completed', closed_at: at(-H), freshness: null }),
  // Closed sessions past their expiry were reaped or closed: never "expired, not reaped".
  view('reaped', { status: 'closed', outcome: 'expired', closed_at: at(-H), expires_at: at(-2 * H), freshness: null }),
  view('overdue', { expires_at: at(-10 * 60_000) }),
  view('overdue-archived', { status: 'archived', expires_at: at(-20 * 60_000) }),
  view('soon', { expires_at: at(30 * 60_000) }),
  view('later', { expires_at: at(3 * H) }),
  view('stale', { updated_at: at(-48 * H), freshness: 'stale' }),
  view('stale-handed', { status: 'handed_off', updated_at: at(-72 * H), freshness: 'stale' }),
  view('stale-archived', { status: 'archived', updated_at: at(-72 * H), freshness: 'stale' }),
];

describe('attention', () => {
  it('failures are the failed and abandoned closes, recent within the window', () => {
    expect(FAILED_OUTCOMES).toEqual(['failed', 'abandoned']);
    const recent = SESSIONS.filter((v) => closedWith(v, FAILED_OUTCOMES, NOW, DEFAULT_ATTENTION.recentMs)).map((v) => v.session_id);
    expect(recent).toEqual(['failed-new', 'abandoned']);
    expect(SESSIONS.filter((v) => closedWith(v, ['failed'], NOW)).map((v) => v.session_id)).toEqual(['failed-new', 'failed-old']);
  });

  it('expired not reaped is open and past its expiry (archived too: a reaper closes those); expiring soon is open and due within the window', () => {
    expect(SESSIONS.filter((v) => isExpiredUnreaped(v, NOW)).map((v) => v.session_id)).toEqual(['overdue', 'overdue-archived']);
    expect(SESSIONS.filter((v) => expiresWithin(v, NOW, H)).map((v) => v.session_id)).toEqual(['soon']);
  });

  it('counts each kind once over every session, the most urgent first', () => {
    const a = judgeAttention(SESSIONS, NOW, DEFAULT_ATTENTION, 1);
    const brief = (item: { count: number; sessions: SessionView[] }) => [item.count, item.sessions.map((v) => v.session_id)];
    expect(brief(a.failed_recently)).toEqual([2, ['failed-new']]);
    expect(brief(a.expired_unreaped)).toEqual([2, ['overdue-archived']]);
    expect(brief(a.expiring_soon)).toEqual([1, ['soon']]);
    // Stranded leaves the archived one out, the stalest first.
    expect(brief(a.stranded)).toEqual([2, ['stale-handed']]);
  });
});
