// crux's server entry in an MCP client's configuration: merged and taken out, every other entry kept (JSON and
// Codex's TOML), idempotent, and refusing what does not parse.
import { describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';

const parse = (text: string) => parseToml(text, { integersAsBigInt: 'asNeeded' });
import { editTomlServer, isCruxServer, mergeJsonServer, removeJsonServer } from '../../../src/cli/install/mcp-config';
import { MCP_CLIENTS, clientOf } from '../../../src/cli/install/mcp-clients';

const ENTRY = { command: '/usr/bin/node', args: ['/opt/crux/bin/crux', '--agent', 'planner', 'mcp'] };
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    return error as { kind: string; message: string };
  }
  throw new Error('not refused');
};

describe('mergeJsonServer / removeJsonServer', () => {
  it('adds mcpServers.crux to nothing, and a second merge changes nothing', () => {
    const first = mergeJsonServer('', ENTRY, 'f.json');
    expect(first.changed).toBe(true);
    expect(JSON.parse(first.text)).toEqual({ mcpServers: { crux: ENTRY } });
    expect(mergeJsonServer(first.text, ENTRY, 'f.json')).toEqual({ text: first.text, changed: false });
  });

  it('keeps every other key and server in their order, and replaces an older crux entry in place', () => {
    const doc = { numStartups: 3, mcpServers: { a: { command: 'x' }, crux: { command: 'crux', args: ['mcp'] }, z: { url: 'http://h' } }, projects: {} };
    const merged = JSON.parse(mergeJsonServer(JSON.stringify(doc), ENTRY, 'f').text);
    expect(Object.keys(merged)).toEqual(['numStartups', 'mcpServers', 'projects']);
    expect(Object.keys(merged.mcpServers)).toEqual(['a', 'crux', 'z']);
    expect(merged.mcpServers).toEqual({ ...doc.mcpServers, crux: ENTRY });
  });

  it('install then uninstall gives back the document as it was', () => {
    const original = `${JSON.stringify({ theme: 'dark', mcpServers: { a: { command: 'x' } } }, null, 2)}\n`;
    const installed = mergeJsonServer(original, ENTRY, 'f').text;
    expect(removeJsonServer(installed, 'f')).toEqual({ text: original, changed: true });
    // An mcpServers made by install goes with the entry.
    const bare = `${JSON.stringify({ theme: 'dark' }, null, 2)}\n`;
    expect(removeJsonServer(mergeJsonServer(bare, ENTRY, 'f').text, 'f').text).toBe(bare);
  });

  it('uninstall of nothing changes nothing, and a "crux" entry that runs something else is kept', () => {
    expect(removeJsonServer('', 'f')).toEqual({ text: '', changed: false });
    expect(removeJsonServer('{"mcpServers":{"a":{}}}', 'f')).toEqual({ text: '{"mcpServers":{"a":{}}}', changed: false });
    const foreign = '{"mcpServers":{"crux":{"command":"python","args":["crux_server.py"]}}}';
    expect(removeJsonServer(foreign, 'f')).toEqual({ text: foreign, changed: false, foreign: true });
  });

  it('refuses a file that is not a JSON object, or whose mcpServers is not one, naming the file (exit 5)', () => {
    for (const text of ['{"mcpServers": {', '[1]', '{"mcpServers": []}', '{"mcpServers": "x"}']) {
      const error = refusal(() => mergeJsonServer(text, ENTRY, '/home/u/.claude.json'));
      expect(error.kind).toBe('invalid_input');
      expect(error.message).toContain('/home/u/.claude.json');
      expect(refusal(() => removeJsonServer(text, '/home/u/.claude.json')).kind).toBe('invalid_input');
    }
  });
});

describe('isCruxServer', () => {
  it("knows crux's mcp command by its script or binary, and nothing else", () => {
    expect(isCruxServer(ENTRY)).toBe(true);
    expect(isCruxServer({ command: 'crux', args: ['mcp'] })).toBe(true);
    // The script bin/crux links to, which `crux mcp install` names (it follows links).
    expect(isCruxServer({ command: '/usr/bin/node', args: ['/usr/lib/node_modules/crux/bin/crux.cjs', 'mcp'] })).toBe(true);
    expect(isCruxServer({ command: '/usr/bin/node', args: ['/opt/x/crux.cjs.bak', 'mcp'] })).toBe(false);
    expect(isCruxServer({ command: 'C:\\node.exe', args: ['C:\\crux\\bin\\crux', 'mcp'] })).toBe(true);
    expect(isCruxServer({ command: '/usr/bin/node', args: ['/opt/crux/bin/crux', 'session', 'list'] })).toBe(false);
    expect(isCruxServer({ command: 'npx', args: ['cruxify', 'mcp'] })).toBe(false);
    expect(isCruxServer({ url: 'http://h' })).toBe(false);
  });
});

describe('editTomlServer (Codex config.toml)', () => {
  const CONFIG = [
    '# my settings',
    'model = "o3" # the default',
    'temperature = 1.0',
    'big = 1234567890123456789',
    '',
    '[mcp_servers.other]',
    'command = "x"',
    'args = ["-v"]',
    '',
    '[profiles.fast]',
    'model = "o4-mini"',
    '',
  ].join('\n');

  it('appends [mcp_servers.crux] keeping every other line, comment included; a second edit changes nothing', () => {
    const first = editTomlServer(CONFIG, ENTRY, 'config.toml');
    expect(first.changed).toBe(true);
    expect(first.reformatted).toBeUndefined();
    expect(first.text.startsWith(CONFIG)).toBe(true);
    expect(parse(first.text).mcp_servers).toEqual({ other: { command: 'x', args: ['-v'] }, crux: ENTRY });
    expect(editTomlServer(first.text, ENTRY, 'config.toml')).toEqual({ text: first.text, changed: false });
  });

  it('replaces an older crux section (with its sub-tables) in place of nothing else, and uninstall gives back the file', () => {
    const older = `${CONFIG}\n[mcp_servers.crux]\ncommand = "crux"\nargs = ["mcp"]\n\n[mcp_servers.crux.env]\nCRUX_AGENT = "old"\n`;
    const updated = editTomlServer(older, ENTRY, 'c');
    expect(parse(updated.text).mcp_servers).toEqual({ other: { command: 'x', args: ['-v'] }, crux: ENTRY });
    expect(updated.text).toContain('# my settings');
    expect(editTomlServer(editTomlServer(CONFIG, ENTRY, 'c').text, undefined, 'c')).toEqual({ text: CONFIG, changed: true });
    expect(editTomlServer(CONFIG, undefined, 'c')).toEqual({ text: CONFIG, changed: false });
    expect(editTomlServer('', undefined, 'c')).toEqual({ text: '', changed: false });
  });

  it("keeps a section after crux's where it was", () => {
    const middle = '[mcp_servers.crux]\ncommand = "crux"\nargs = ["mcp"]\n\n[profiles.a]\nmodel = "b"\n';
    const removed = editTomlServer(middle, undefined, 'c');
    expect(removed.text).toBe('[profiles.a]\nmodel = "b"\n');
  });

  it('an entry spelled inline is replaced by the library writing the file anew: every entry kept, said so', () => {
    const inline = '# gone\n[mcp_servers]\ncrux = { command = "crux", args = ["mcp"] }\nother = { command = "x" }\n';
    const edited = editTomlServer(inline, ENTRY, 'c');
    expect(edited.reformatted).toBe(true);
    expect(parse(edited.text)).toEqual({ mcp_servers: { crux: ENTRY, other: { command: 'x' } } });
    const removed = editTomlServer(inline, undefined, 'c');
    expect(parse(removed.text)).toEqual({ mcp_servers: { other: { command: 'x' } } });
  });

  it('leaves a "crux" server that runs something else, and refuses TOML that does not parse (exit 5)', () => {
    const foreign = '[mcp_servers.crux]\ncommand = "python"\nargs = ["server.py"]\n';
    expect(editTomlServer(foreign, undefined, 'c')).toEqual({ text: foreign, changed: false, foreign: true });
    for (const text of ['[mcp_servers\ncommand = 1', 'mcp_servers = 3\n', 'a = 1\na = 2\n']) {
      const error = refusal(() => editTomlServer(text, ENTRY, '/home/u/.codex/config.toml'));
      expect(error.kind).toBe('invalid_input');
      expect(error.message).toContain('/home/u/.codex/config.toml');
    }
  });
});

describe('the MCP clients', () => {
  const where = (env: NodeJS.ProcessEnv, platform: NodeJS.Platform = 'linux') => ({ env, platform, projectRoot: () => '/src/app' });
  const file = (name: string, scope: 'user' | 'project', env: NodeJS.ProcessEnv, platform?: NodeJS.Platform) =>
    clientOf(name, MCP_CLIENTS).file(scope, where(env, platform));

  it('name each file where the client documents it', () => {
    expect(file('claude-code', 'user', { HOME: '/h' })).toBe('/h/.claude.json');
    expect(file('claude-code', 'user', { HOME: '/h', CLAUDE_CONFIG_DIR: '/c' })).toBe('/c/.claude.json');
    expect(file('claude-code', 'project', { HOME: '/h' })).toBe('/src/app/.mcp.json');
    expect(file('claude-desktop', 'user', { HOME: '/h' })).toBe('/h/.config/Claude/claude_desktop_config.json');
    expect(file('claude-desktop', 'user', { HOME: '/h', XDG_CONFIG_HOME: '/x' })).toBe('/x/Claude/claude_desktop_config.json');
    expect(file('claude-desktop', 'user', { HOME: '/h' }, 'darwin')).toBe('/h/Library/Application Support/Claude/claude_desktop_config.json');
    expect(file('cursor', 'user', { HOME: '/h' })).toBe('/h/.cursor/mcp.json');
    expect(file('cursor', 'project', { HOME: '/h' })).toBe('/src/app/.cursor/mcp.json');
    expect(file('codex', 'user', { HOME: '/h' })).toBe('/h/.codex/config.toml');
    expect(file('codex', 'user', { HOME: '/h', CODEX_HOME: '/k' })).toBe('/k/config.toml');
    expect(file('gemini-cli', 'user', { HOME: '/h' })).toBe('/h/.gemini/settings.json');
    expect(file('gemini-cli', 'project', { HOME: '/h' })).toBe('/src/app/.gemini/settings.json');
    expect(clientOf('gemini-cli', MCP_CLIENTS).entry({ command: '/n', args: ['/c.cjs', 'mcp'] })).toEqual({ command: '/n', args: ['/c.cjs', 'mcp'] });
    expect(MCP_CLIENTS.map((c) => c.name)).toEqual(['claude-code', 'claude-desktop', 'cursor', 'gemini-cli', 'codex']);
  });

  it('refuse a user file without HOME (exit 5), never one under the current directory', () => {
    for (const name of ['claude-code', 'claude-desktop', 'cursor', 'codex']) expect(refusal(() => file(name, 'user', {})).kind).toBe('invalid_input');
  });
});
