// Refusals in tool terms (src/cli/mcp/tool-terms.ts): its lists match the tools, and the error table's
// CLI phrasing comes out as tools and arguments.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inToolTerms, toolNames } from '../../../src/cli/mcp/tool-terms';
import { TOOLS } from '../../../src/cli/mcp/tools';
import { DEFAULT_HINTS } from '../../../src/shared/errors';

describe('inToolTerms', () => {
  it('knows every tool and every argument the tools take, as zod reads their shapes', () => {
    expect([...toolNames().tools].sort()).toEqual(TOOLS.map((t) => t.name).sort());
    expect([...toolNames().args].sort()).toEqual([...new Set(TOOLS.flatMap((t) => Object.keys(t.input(z))))].sort());
  });

  it('says commands that are tools as calls, options that are arguments as arguments', () => {
    expect(inToolTerms('see `crux session list`')).toBe('call session_list');
    expect(inToolTerms('see `crux session list --all`')).toBe('call session_list with all: true');
    expect(inToolTerms('each package is accepted once; `crux handoff list` shows it')).toBe('each package is accepted once; handoff_list shows it');
    expect(inToolTerms('run `crux journal check` for the details')).toBe('call journal_check for the details');
    // A command's operands are the tool's arguments: the placeholder goes with the command.
    expect(inToolTerms('`crux session history <id>` lists the versions kept')).toBe('session_history lists the versions kept');
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

  it('says as a tool every command line of a refusal that has one, operands and all', () => {
    // Every command line the layers under the adapters (and the operations) write into a message or a hint; the
    // doctor's findings (domain/doctor*.ts) are no tool's.
    const root = join(__dirname, '../../../src');
    const dirs = ['domain', 'journal', 'shared', 'cli/operations'].map((d) => join(root, d));
    const files = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) =>
          e.isDirectory()
            ? files(join(dir, e.name))
            : e.name.endsWith('.ts') && !e.name.startsWith('doctor')
              ? [fs.readFileSync(join(dir, e.name), 'utf8')]
              : [],
        );
    const texts = dirs.flatMap((dir) => files(dir));
    const commands = new Set(
      texts.flatMap((text) =>
        [...text.replace(/\\`/g, '`').matchAll(/`crux ([a-z]+) ([a-z]+)[^`$]*`/g)].filter((m) => toolNames().tools.has(`${m[1]}_${m[2]}`)).map((m) => m[0]),
      ),
    );
    expect(commands.size).toBeGreaterThan(3);
    for (const command of commands) expect(inToolTerms(`see ${command}`), command).not.toContain('`crux ');
  });

  it('gives every default hint of the error table without a flag or a shell command', () => {
    for (const hint of Object.values(DEFAULT_HINTS)) {
      const said = inToolTerms(hint);
      expect(said, hint).not.toMatch(/(^|[\s(])--[a-z]/);
      expect(said, hint).not.toMatch(/`crux /);
    }
  });
});
