// The JSON document carries the damage its replay passed over; human output never carries a raw control.
import { describe, expect, it } from 'vitest';
import { terminalSafe, withWarnings } from '../../../src/output/emit';
import { renderCase, renderCaseList } from '../../../src/output/case';
import { renderClose } from '../../../src/output/session';
import { renderList } from '../../../src/output/handoff';
import { makeStyle, PLAIN_PAINTS } from '../../../src/output/style';

const HOSTILE = '\u001b]0;OWNED\u0007\u001b[2J\u001b[31m\u202e\u009b';
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const piped = makeStyle(PLAIN_PAINTS, { box: false, width: undefined }, false, Date.parse('2026-12-01T12:00:00Z'));
const terminal = makeStyle(PLAIN_PAINTS, { box: true, width: 80 }, false, Date.parse('2026-12-01T12:00:00Z'));

const aCase = {
  case_id: 'c_000000000000000000000001',
  task: `task ${HOSTILE}`,
  context: `ctx\nline two ${HOSTILE}`,
  action: HOSTILE,
  outcome: HOSTILE,
  success: true,
  reward: 1,
  tags: [HOSTILE],
  source_receipt: HOSTILE,
  created_at: '2026-12-01T11:55:00.000Z',
  times_reused: 0,
} as any;

describe('withWarnings', () => {
  it('adds warnings to an object document only when there are some', () => {
    expect(withWarnings('{"a":1}', [])).toBe('{"a":1}');
    expect(withWarnings('{"a":1}', undefined)).toBe('{"a":1}');
    expect(JSON.parse(withWarnings('{"a":1}', [{ file: 'sessions.jsonl', line: 3, reason: 'bad JSON' }]))).toEqual({
      a: 1,
      warnings: [{ file: 'sessions.jsonl', line: 3, reason: 'bad JSON' }],
    });
    expect(JSON.parse(withWarnings('{}', [{ file: 'f', line: 1, reason: 'r' }]))).toEqual({ warnings: [{ file: 'f', line: 1, reason: 'r' }] });
  });
});

describe('terminalSafe', () => {
  it('escapes every control but newline and tab; keeps SGR colour only when colour is on', () => {
    expect(terminalSafe(`a\u001b[31mred\u001b[39m\n\tb${HOSTILE}`, false)).not.toMatch(RAW);
    expect(terminalSafe('\u001b[32mok\u001b[39m\n', true)).toBe('\u001b[32mok\u001b[39m\n');
    expect(terminalSafe('\u001b]0;x\u0007', true)).toBe('\\x1b]0;x\\x07');
  });
});

describe('renderers escape stored text', () => {
  it('case show, case list, session close and handoff list', () => {
    expect(renderCase({ case: aCase })).not.toMatch(RAW);
    expect(renderCase({ case: aCase })).toContain('ctx\n                line two \\x1b]0;OWNED');
    for (const style of [piped, terminal]) expect([...renderCaseList({ cases: [aCase] }, style)].join('\n')).not.toMatch(RAW);
    const session = { session_id: `s${HOSTILE}`, agent: HOSTILE, outcome: 'completed', summary: HOSTILE, closed_at: 'x' } as any;
    expect(renderClose({ outcome: 'closed', session } as any)).not.toMatch(RAW);
    const row = {
      handoff_id: `h${HOSTILE}`,
      session_id: HOSTILE,
      source_agent: HOSTILE,
      target_agent: HOSTILE,
      accepted_by: HOSTILE,
      status: 'outstanding',
      created_at: '2026-12-01T11:00:00.000Z',
      expires_at: '2026-12-02T11:00:00.000Z',
      content_hash: 'ab',
    } as any;
    for (const style of [piped, terminal])
      expect(
        [
          ...renderList(
            {
              handoffs: [row],
              keys: [{ agent: HOSTILE, fingerprint: `f${HOSTILE}`, status: 'revoked', revoked_at: '2026-12-01T11:00:00.000Z', public_key: HOSTILE } as any],
            },
            style,
          ),
        ].join('\n'),
      ).not.toMatch(RAW);
  });

  it('relative times and short ids on a terminal; exact values piped', () => {
    expect([...renderCaseList({ cases: [aCase] }, terminal)].join('\n')).toContain('5m ago');
    expect([...renderCaseList({ cases: [aCase] }, piped)].join('\n')).toContain('2026-12-01T11:55:00.000Z');
  });
});
