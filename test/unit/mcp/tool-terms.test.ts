// Refusals in tool terms (src/cli/mcp/tool-terms.ts): its lists match the tools, and the error table's
// CLI phrasing comes out as tools and arguments.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ARGUMENT_NAMES, inToolTerms, TOOL_NAMES } from '../../../src/cli/mcp/tool-terms';
import { TOOLS } from '../../../src/cli/mcp/tools';
import { DEFAULT_HINTS } from '../../../src/shared/errors';

describe('inToolTerms', () => {
  it('knows every tool and every argument the tools take', () => {
    expect([...TOOL_NAMES].sort()).toEqual(TOOLS.map((t) => t.name).sort());
    const args = new Set(TOOLS.flatMap((t) => Object.keys(t.input(z))));
    expect([...args].filter((a) => !ARGUMENT_NAMES.has(a))).toEqual([]);
  });

  it('says commands that are tools as calls, options that are arguments as arguments', () => {
    expect(inToolTerms('see `crux session list`')).toBe('call session_list');
    expect(inToolTerms('see `crux session list --all`')).toBe('call session_list with all: true');
    expect(inToolTerms('each package is accepted once; `crux handoff list` shows it')).toBe('each package is accepted once; handoff_list shows it');
    expect(inToolTerms('run `crux journal check` for the details')).toBe('call journal_check for the details');
    expect(inToolTerms('raise --max-tokens / CRUX_SESSION_TOKEN_BUDGET, or close the session')).toBe(
      'raise argument max_tokens / CRUX_SESSION_TOKEN_BUDGET, or close the session',
    );
    expect(inToolTerms('--top-k must be a whole number')).toBe('argument top_k must be a whole number');
    expect(inToolTerms('the state archived allows: unarchive, close, touch')).toBe('the state archived allows: session_unarchive, session_close');
  });

  it('names the scope that holds a session of another agent without --agent', () => {
    expect(inToolTerms('it exists under agent "planner": use --agent planner')).toBe('it exists under agent "planner": a server of that scope reads it');
    expect(inToolTerms('it exists without an agent and under agents "a", "b": use --agent <name>, or leave --agent out')).toBe(
      'it exists without an agent and under agents "a", "b": a server of that scope reads it',
    );
  });

  it('leaves what it does not know as it is: a command without a tool, a quoted value, an unknown operation', () => {
    expect(inToolTerms('see `crux doctor`')).toBe('see `crux doctor`');
    expect(inToolTerms('no session "--at"')).toBe('no session "--at"');
    expect(inToolTerms('allows: reap')).toBe('allows: reap');
  });

  it('gives every default hint of the error table without a flag or a shell command', () => {
    for (const hint of Object.values(DEFAULT_HINTS)) {
      const said = inToolTerms(hint);
      expect(said, hint).not.toMatch(/(^|[\s(])--[a-z]/);
      expect(said, hint).not.toMatch(/`crux /);
    }
  });
});
