import { describe, expect, it } from 'vitest';
import {
  allowedOps,
  describeMachine,
  isIdempotent,
  nextStatus,
  SESSION_OPS,
  SESSION_STATES,
  TERMINAL_STATE,
  TRANSITIONS,
} from '../../../src/domain/session/machine';

describe('the session machine', () => {
  it('has one terminal state, closed, with no way out', () => {
    const m = describeMachine();
    expect(m.states.filter((s) => s.terminal).map((s) => s.name)).toEqual(['closed']);
    expect(TERMINAL_STATE).toBe('closed');
    expect(TRANSITIONS.filter((t) => t.from === 'closed')).toEqual([]);
    expect(allowedOps('closed')).toEqual([]);
    expect(isIdempotent('closed', 'close')).toBe(true);
    expect(isIdempotent('closed', 'touch')).toBe(true);
  });

  it('declares each (state, op) at most once, over known states and ops only', () => {
    const seen = new Set<string>();
    for (const t of TRANSITIONS) {
      expect(SESSION_STATES).toContain(t.from);
      expect(SESSION_STATES).toContain(t.to);
      expect(SESSION_OPS).toContain(t.op);
      const k = `${t.from}/${t.op}`;
      expect(seen.has(k), k).toBe(false);
      seen.add(k);
    }
  });

  it('reaches every state from the initial one, and the terminal state from every state', () => {
    const reach = new Set(['active']);
    for (let changed = true; changed; ) {
      changed = false;
      for (const t of TRANSITIONS) if (reach.has(t.from) && !reach.has(t.to)) changed = reach.add(t.to) !== undefined;
    }
    expect([...reach].sort()).toEqual([...SESSION_STATES].sort());
    for (const s of SESSION_STATES) if (s !== 'closed') expect(nextStatus(s, 'close')).toBe('closed');
  });

  it('is the table of SPEC §4, refined by receive and touch', () => {
    const table = Object.fromEntries(SESSION_STATES.map((s) => [s, Object.fromEntries(SESSION_OPS.map((op) => [op, nextStatus(s, op) ?? '-']))]));
    expect(table).toEqual({
      active: { put: 'active', archive: 'archived', unarchive: '-', handoff: 'handed_off', receive: 'active', touch: 'active', close: 'closed' },
      archived: { put: '-', archive: '-', unarchive: 'active', handoff: '-', receive: '-', touch: 'archived', close: 'closed' },
      handed_off: { put: 'active', archive: 'archived', unarchive: '-', handoff: 'handed_off', receive: 'active', touch: 'handed_off', close: 'closed' },
      closed: { put: '-', archive: '-', unarchive: '-', handoff: '-', receive: '-', touch: '-', close: '-' },
    });
  });

  it('prints as data with the SPEC §8 field names', () => {
    const m = JSON.parse(JSON.stringify(describeMachine()));
    expect(Object.keys(m.states[0])).toEqual(['name', 'terminal']);
    expect(Object.keys(m.transitions[0])).toEqual(['from', 'op', 'to']);
    expect(m.creating).toEqual(['put', 'import', 'receive']);
  });
});
