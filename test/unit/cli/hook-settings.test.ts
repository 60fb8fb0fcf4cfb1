import { describe, expect, it } from 'vitest';
import { mergeHooks as merge } from '../../../src/cli/hook/settings';
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
    const settings = { a: 1, hooks: { Stop: [{ matcher: '', hooks: [{ type: 'command', command: 'say done' }] }], PostToolUse: [{ matcher: 'Write', hooks: [] }] }, z: [1] };
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
