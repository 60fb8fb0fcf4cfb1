import { describe, expect, it } from 'vitest';
import { mergeHooks as merge, removeHooks } from '../../../src/cli/hook/settings';
import { CLAUDE_CODE, GEMINI_CLI } from '../../../src/cli/hook/clients';

const CLAUDE_CODE_EVENTS = Object.keys(CLAUDE_CODE.events);
const mergeHooks = (text: string, command: string, where: string) => merge(CLAUDE_CODE, text, command, where);

const CMD = 'crux hook claude-code';
const ours = { type: 'command', command: CMD };

describe('mergeHooks', () => {
  it('adds one group per event to empty settings, and a second merge changes nothing', () => {
    const first = mergeHooks('', CMD, 'settings.json');
    expect(first.changed).toBe(true);
    expect(first.events).toEqual([...CLAUDE_CODE_EVENTS]);
    const hooks = JSON.parse(first.text).hooks;
    for (const event of CLAUDE_CODE_EVENTS) expect(hooks[event]).toEqual([{ hooks: [ours] }]);
    expect(mergeHooks(first.text, CMD, 'settings.json')).toEqual({ text: first.text, changed: false, events: [] });
  });

  it('keeps every other setting, group and handler, in their order', () => {
    const settings = {
      a: 1,
      hooks: { Stop: [{ matcher: '', hooks: [{ type: 'command', command: 'say done' }] }], PostToolUse: [{ matcher: 'Write', hooks: [] }] },
      z: [1],
    };
    const merged = JSON.parse(mergeHooks(JSON.stringify(settings), CMD, 's').text);
    expect(Object.keys(merged)).toEqual(['a', 'hooks', 'z']);
    expect(merged.hooks.Stop).toEqual([...settings.hooks.Stop, { hooks: [ours] }]);
    expect(merged.hooks.PostToolUse).toEqual(settings.hooks.PostToolUse);
  });

  it('updates an entry of ours in place and drops its duplicates, leaving other handlers alone', () => {
    const old = { type: 'command', command: '/usr/local/bin/crux --agent x hook claude-code' };
    const settings = { hooks: { Stop: [{ hooks: [old, { type: 'command', command: 'not-crux hook claude-codex' }] }, { hooks: [{ ...old }] }] } };
    const merged = JSON.parse(mergeHooks(JSON.stringify(settings), CMD, 's').text);
    expect(merged.hooks.Stop).toEqual([{ hooks: [ours, { type: 'command', command: 'not-crux hook claude-codex' }] }]);
  });

  it("writes Gemini CLI's events and named handlers, and tells its entries from Claude Code's", () => {
    const claude = mergeHooks('', CMD, 's').text;
    const both = JSON.parse(merge(GEMINI_CLI, claude, 'crux hook gemini-cli', 's').text).hooks;
    expect(both.BeforeAgent).toEqual([{ hooks: [{ name: 'crux', type: 'command', command: 'crux hook gemini-cli' }] }]);
    expect(both.SessionStart).toEqual([{ hooks: [ours] }, { hooks: [{ name: 'crux', type: 'command', command: 'crux hook gemini-cli' }] }]);
    expect(both.UserPromptSubmit).toEqual([{ hooks: [ours] }]);
  });

  it('refuses settings it cannot merge into, naming the file', () => {
    for (const text of ['{', '"x"', '{"hooks": 1}', '{"hooks": {"Stop": "x"}}']) {
      expect(() => mergeHooks(text, CMD, '/p/settings.json'), text).toThrow(/\/p\/settings\.json/);
    }
  });
});

describe('removeHooks', () => {
  const settings = {
    model: 'opus',
    hooks: {
      Stop: [{ matcher: '', hooks: [{ type: 'command', command: 'say done' }] }],
      PostToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: 'fmt' }] }],
    },
    permissions: { allow: ['Bash(ls)'] },
  };
  const original = `${JSON.stringify(settings, null, 2)}\n`;

  it('takes out exactly what install added: the settings as they were before it', () => {
    for (const cmd of [CMD, "crux --agent 'a b' hook claude-code --record-cases", '/opt/bin/crux --data-dir /d hook claude-code']) {
      const installed = mergeHooks(original, cmd, 's').text;
      const removed = removeHooks(CLAUDE_CODE, installed, 's');
      expect(removed.changed).toBe(true);
      expect(removed.events.sort()).toEqual([...CLAUDE_CODE_EVENTS].sort());
      expect(removed.text).toBe(original);
    }
    // Settings install made from nothing are left empty, not deleted.
    expect(JSON.parse(removeHooks(CLAUDE_CODE, mergeHooks('', CMD, 's').text, 's').text)).toEqual({});
  });

  it("keeps another handler in the same group, and Gemini CLI's entries when Claude Code's go", () => {
    const shared = { hooks: { Stop: [{ matcher: 'x', hooks: [ours, { type: 'command', command: 'say done' }] }] } };
    expect(JSON.parse(removeHooks(CLAUDE_CODE, JSON.stringify(shared), 's').text)).toEqual({
      hooks: { Stop: [{ matcher: 'x', hooks: [{ type: 'command', command: 'say done' }] }] },
    });
    const both = merge(GEMINI_CLI, mergeHooks('', CMD, 's').text, 'crux hook gemini-cli', 's').text;
    const left = JSON.parse(removeHooks(CLAUDE_CODE, both, 's').text).hooks;
    expect(Object.keys(left).sort()).toEqual(Object.keys(GEMINI_CLI.events).sort());
    expect(JSON.stringify(left)).not.toContain('claude-code');
  });

  it('changes nothing where there is nothing of ours, and refuses what it cannot read', () => {
    expect(removeHooks(CLAUDE_CODE, '', 's')).toEqual({ text: '', changed: false, events: [] });
    expect(removeHooks(CLAUDE_CODE, original, 's')).toEqual({ text: original, changed: false, events: [] });
    for (const text of ['{', '[]', '{"hooks": 1}']) expect(() => removeHooks(CLAUDE_CODE, text, '/p/settings.json'), text).toThrow(/\/p\/settings\.json/);
  });
});
