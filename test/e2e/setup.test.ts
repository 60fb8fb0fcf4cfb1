// `crux mcp install|uninstall <client>` and `crux hook install|uninstall <client>`, in-process: each
// client's own file, merged and restored, idempotent, through symlinks, refusing what does not parse, --print.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, CRUX_SCRIPT, hookCommand, tempDir, testEnv } from '../helpers/cli';
import { runCli } from '../helpers/run-cli';

interface Setup {
  home: string;
  cwd: string;
}

function setup(): Setup {
  const home = tempDir('crux-setup-');
  const cwd = join(home, 'src', 'app');
  fs.mkdirSync(join(cwd, '.git'), { recursive: true });
  fs.mkdirSync(join(cwd, 'lib', 'deep'), { recursive: true });
  return { home, cwd };
}

/**
 * `crux …args` in this process (test/helpers/run-cli.ts), which names bin/crux as the program's script as a
 * spawned bin/crux does (src/cli/started-as.ts); the entries written are then started as processes, and bin/crux
 * through a symlink, spawned.
 */
function run(s: Setup, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  return runCli(args, {
    cwd: opts.cwd ?? s.cwd,
    env: { HOME: s.home, XDG_CONFIG_HOME: undefined, CLAUDE_CONFIG_DIR: undefined, CODEX_HOME: undefined, ...opts.env },
  });
}

const CLIENTS = [
  { name: 'claude-code', user: '.claude.json', project: '.mcp.json', format: 'json' },
  { name: 'claude-desktop', user: '.config/Claude/claude_desktop_config.json', project: undefined, format: 'json' },
  { name: 'cursor', user: '.cursor/mcp.json', project: '.cursor/mcp.json', format: 'json' },
  { name: 'gemini-cli', user: '.gemini/settings.json', project: '.gemini/settings.json', format: 'json' },
  { name: 'codex', user: '.codex/config.toml', project: undefined, format: 'toml' },
] as const;

const OTHERS_JSON = `${JSON.stringify({ theme: 'dark', mcpServers: { github: { command: 'gh-mcp', args: ['--stdio'] } }, numStartups: 7 }, null, 2)}\n`;
const OTHERS_TOML = '# my Codex\nmodel = "o3" # keep me\n\n[mcp_servers.github]\ncommand = "gh-mcp"\nargs = ["--stdio"]\n';

describe.each(CLIENTS)('crux mcp install $name', (client) => {
  const others = client.format === 'json' ? OTHERS_JSON : OTHERS_TOML;

  it('merges into the file the client reads, keeping every other entry; a second install changes nothing; uninstall restores it', async () => {
    const s = setup();
    const file = join(s.home, client.user);
    fs.mkdirSync(dirname(file), { recursive: true });
    fs.writeFileSync(file, others);
    const first = await run(s, ['--agent', 'planner', 'mcp', 'install', client.name, '--json']);
    expect(first.stderr).toBe('');
    expect(first.exitCode).toBe(0);
    const doc = JSON.parse(first.stdout);
    expect(doc).toMatchObject({
      client: client.name,
      scope: 'user',
      file,
      changed: true,
      server: { command: process.execPath, args: [CRUX_SCRIPT, '--agent', 'planner', 'mcp'] },
    });
    const written = fs.readFileSync(file, 'utf8');
    if (client.format === 'json') {
      const parsed = JSON.parse(written);
      expect(parsed.theme).toBe('dark');
      expect(parsed.numStartups).toBe(7);
      expect(parsed.mcpServers.github).toEqual({ command: 'gh-mcp', args: ['--stdio'] });
      expect(parsed.mcpServers.crux).toMatchObject({ command: process.execPath, args: [CRUX_SCRIPT, '--agent', 'planner', 'mcp'] });
    } else {
      expect(written.startsWith(others)).toBe(true);
      expect(written).toContain('[mcp_servers.crux]');
    }
    const second = await run(s, ['--agent', 'planner', 'mcp', 'install', client.name, '--json']);
    expect(JSON.parse(second.stdout).changed).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe(written);
    const removed = await run(s, ['mcp', 'uninstall', client.name]);
    expect(removed.exitCode).toBe(0);
    expect(removed.stdout).toContain('removed the crux server');
    expect(fs.readFileSync(file, 'utf8')).toBe(others);
    const again = await run(s, ['mcp', 'uninstall', client.name, '--json']);
    expect([again.exitCode, JSON.parse(again.stdout).changed]).toEqual([0, false]);
    expect(fs.readFileSync(file, 'utf8')).toBe(others);
    expect(fs.readdirSync(dirname(file)).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('writes through a symlinked file (the link stays, its target changes) and creates a missing one', async () => {
    const s = setup();
    const file = join(s.home, client.user);
    const dotfiles = join(s.home, 'dotfiles', 'config');
    fs.mkdirSync(dirname(dotfiles), { recursive: true });
    fs.writeFileSync(dotfiles, others);
    fs.mkdirSync(dirname(file), { recursive: true });
    fs.symlinkSync(dotfiles, file);
    expect((await run(s, ['mcp', 'install', client.name])).exitCode).toBe(0);
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(file)).toBe(dotfiles);
    expect(fs.readFileSync(dotfiles, 'utf8')).toContain(CRUX_SCRIPT);
    expect((await run(s, ['mcp', 'uninstall', client.name])).exitCode).toBe(0);
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(dotfiles, 'utf8')).toBe(others);

    const fresh = setup();
    expect((await run(fresh, ['mcp', 'install', client.name])).exitCode).toBe(0);
    expect(fs.readFileSync(join(fresh.home, client.user), 'utf8')).toContain(CRUX_SCRIPT);
    expect(fs.statSync(join(fresh.home, client.user)).mode & 0o777).toBe(0o644);
  });

  it('leaves a file that does not parse untouched, naming it (exit 5); --print writes nothing', async () => {
    const s = setup();
    const file = join(s.home, client.user);
    fs.mkdirSync(dirname(file), { recursive: true });
    const broken = client.format === 'json' ? '{"mcpServers": {' : '[mcp_servers\n';
    fs.writeFileSync(file, broken);
    for (const verb of ['install', 'uninstall']) {
      const refused = await run(s, ['mcp', verb, client.name]);
      expect(refused.exitCode).toBe(5);
      expect(refused.stderr).toContain(file);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      expect(fs.readFileSync(file, 'utf8')).toBe(broken);
    }
    fs.writeFileSync(file, others);
    const printed = await run(s, ['mcp', 'install', client.name, '--print']);
    expect(printed.exitCode).toBe(0);
    expect(printed.stdout).toContain(CRUX_SCRIPT);
    expect(printed.stdout).toContain('github');
    expect(fs.readFileSync(file, 'utf8')).toBe(others);
  });

  it.runIf(client.project !== undefined)('--project writes at the root of the repository the current directory is in', async () => {
    const s = setup();
    const r = await run(s, ['mcp', 'install', client.name, '--project'], { cwd: join(s.cwd, 'lib', 'deep') });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(fs.readFileSync(join(s.cwd, client.project!), 'utf8')).mcpServers.crux.args).toEqual([CRUX_SCRIPT, 'mcp']);
    expect(fs.existsSync(join(s.home, client.user))).toBe(false);
    expect((await run(s, ['mcp', 'uninstall', client.name, '--project'], { cwd: join(s.cwd, 'lib') })).exitCode).toBe(0);
    expect(JSON.parse(fs.readFileSync(join(s.cwd, client.project!), 'utf8'))).toEqual({});
  });

  it.runIf(client.project === undefined)('--project is a usage error (2): the client has only a user configuration', async () => {
    const r = await run(setup(), ['mcp', 'install', client.name, '--project']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/no project configuration/);
  });
});

describe('crux mcp install: the entry', () => {
  it('starts the server under an empty PATH, as Claude Desktop and Cursor start it', async () => {
    const s = setup();
    const printed = await run(s, ['--data-dir', join(s.home, 'data'), 'mcp', 'install', 'claude-desktop', '--print']);
    const entry = JSON.parse(printed.stdout).mcpServers.crux;
    expect(entry.command).toBe(process.execPath);
    expect(entry.args).toEqual([CRUX_SCRIPT, '--data-dir', join(s.home, 'data'), 'mcp']);
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'desktop', version: '0' } },
    };
    const server = await execa(entry.command, entry.args, {
      input: `${JSON.stringify(initialize)}\n`,
      env: { PATH: '' },
      extendEnv: false,
      reject: false,
      cwd: '/',
    });
    expect(server.exitCode).toBe(0);
    expect(JSON.parse(String(server.stdout).split('\n')[0]!)).toMatchObject({ id: 1, result: { serverInfo: { name: 'crux' } } });
  });

  it('names the real script through a symlink to it (an npm bin link), and keeps `crux mcp` the server', async () => {
    const s = setup();
    const link = join(s.home, 'bin', 'crux');
    fs.mkdirSync(dirname(link));
    fs.symlinkSync(CRUX, link);
    const r = await execa(link, ['mcp', 'install', 'cursor', '--print'], { cwd: s.cwd, env: testEnv({ HOME: s.home }), extendEnv: false });
    // bin/crux is bin/pinned/crux.cjs, which names its Node in its first line: the entry names the Node itself and
    // runs the package's bin/crux.cjs beside it.
    expect(fs.realpathSync(CRUX)).toMatch(/\/bin\/pinned\/crux\.cjs$/);
    expect(JSON.parse(String(r.stdout)).mcpServers.crux.args).toEqual([CRUX_SCRIPT, 'mcp']);
    fs.rmSync(link);
    fs.symlinkSync(CRUX_SCRIPT, link);
    const direct = await execa(link, ['mcp', 'install', 'cursor', '--print'], { cwd: s.cwd, env: testEnv({ HOME: s.home }), extendEnv: false });
    expect(JSON.parse(String(direct.stdout)).mcpServers.crux.args).toEqual([CRUX_SCRIPT, 'mcp']);
    const help = await run(s, ['mcp', '--help']);
    expect(help.stdout).toMatch(/install \[options\] <client>/);
  });

  it('refuses an unknown client, both scopes, and a missing HOME, writing nothing', async () => {
    const s = setup();
    expect((await run(s, ['mcp', 'install', 'vscode'])).exitCode).toBe(2);
    expect((await run(s, ['mcp', 'uninstall', 'vscode'])).exitCode).toBe(2);
    expect((await run(s, ['mcp', 'install', 'cursor', '--user', '--project'])).exitCode).toBe(2);
    expect((await run(s, ['mcp', 'install'])).exitCode).toBe(2);
    const noHome = await run(s, ['--data-dir', join(s.home, 'd'), 'mcp', 'install', 'cursor'], { env: { HOME: '' } });
    expect(noHome.exitCode).toBe(5);
    expect(fs.readdirSync(s.home).sort()).toEqual(['src']);
  });

  it('honours CODEX_HOME and CLAUDE_CONFIG_DIR, and a "crux" server that is not crux survives uninstall', async () => {
    const s = setup();
    const codexHome = join(s.home, 'codex-home');
    expect((await run(s, ['mcp', 'install', 'codex'], { env: { CODEX_HOME: codexHome } })).exitCode).toBe(0);
    expect(fs.readFileSync(join(codexHome, 'config.toml'), 'utf8')).toContain('[mcp_servers.crux]');
    const claudeDir = join(s.home, 'claude-dir');
    fs.mkdirSync(claudeDir);
    const foreign = '{"mcpServers":{"crux":{"command":"python3","args":["my_crux.py"]}}}';
    fs.writeFileSync(join(claudeDir, '.claude.json'), foreign);
    const r = await run(s, ['mcp', 'uninstall', 'claude-code'], { env: { CLAUDE_CONFIG_DIR: claudeDir } });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(/does not run crux's mcp command/);
    expect(fs.readFileSync(join(claudeDir, '.claude.json'), 'utf8')).toBe(foreign);
  });
});

describe('crux hook install / uninstall', () => {
  const settings = `${JSON.stringify({ model: 'opus', hooks: { Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }] } }, null, 2)}\n`;

  it('installs at the root of the repository from a subdirectory, with --record-cases, and uninstall restores the file', async () => {
    const s = setup();
    const file = join(s.cwd, '.claude', 'settings.json');
    fs.mkdirSync(dirname(file));
    fs.writeFileSync(file, settings);
    const r = await run(s, ['hook', 'install', 'claude-code', '--record-cases', '--json'], { cwd: join(s.cwd, 'lib', 'deep') });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ settings: file, changed: true, command: hookCommand('hook claude-code --record-cases') });
    expect(fs.existsSync(join(s.cwd, 'lib', 'deep', '.claude'))).toBe(false);
    const hooks = JSON.parse(fs.readFileSync(file, 'utf8')).hooks;
    expect(hooks.SessionEnd).toEqual([{ hooks: [{ type: 'command', command: hookCommand('hook claude-code --record-cases') }] }]);
    // Installing again without the flag updates our entry in place.
    await run(s, ['hook', 'install', 'claude-code']);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).hooks.SessionEnd).toEqual([{ hooks: [{ type: 'command', command: hookCommand('hook claude-code') }] }]);
    const printed = await run(s, ['hook', 'uninstall', 'claude-code', '--print'], { cwd: join(s.cwd, 'lib') });
    expect(printed.stdout).toBe(settings);
    expect(fs.readFileSync(file, 'utf8')).not.toBe(settings);
    const removed = await run(s, ['hook', 'uninstall', 'claude-code'], { cwd: join(s.cwd, 'lib') });
    expect(removed.exitCode).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toBe(settings);
    const again = await run(s, ['hook', 'uninstall', 'claude-code', '--json']);
    expect([again.exitCode, JSON.parse(again.stdout).changed]).toEqual([0, false]);
  });

  it('writes the user settings through a dotfiles symlink, keeping the link and every other setting', async () => {
    const s = setup();
    const target = join(s.home, 'dotfiles', 'claude-settings.json');
    fs.mkdirSync(dirname(target), { recursive: true });
    fs.writeFileSync(target, settings);
    fs.mkdirSync(join(s.home, '.claude'));
    fs.symlinkSync('../dotfiles/claude-settings.json', join(s.home, '.claude', 'settings.json'));
    expect((await run(s, ['hook', 'install', 'claude-code', '--user'])).exitCode).toBe(0);
    expect(fs.lstatSync(join(s.home, '.claude', 'settings.json')).isSymbolicLink()).toBe(true);
    const installed = JSON.parse(fs.readFileSync(target, 'utf8'));
    expect(installed.model).toBe('opus');
    expect(installed.hooks.Stop).toHaveLength(2);
    expect((await run(s, ['hook', 'uninstall', 'claude-code', '--user'])).exitCode).toBe(0);
    expect(fs.lstatSync(join(s.home, '.claude', 'settings.json')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe(settings);
  });

  it('an unknown client is a usage error (2) for install, uninstall and the hook itself; a known hook stays never-2', async () => {
    const s = setup();
    for (const args of [
      ['hook', 'install', 'nope'],
      ['hook', 'uninstall', 'nope'],
      ['hook', 'nope'],
    ]) {
      const r = await run(s, args);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    const bad = await execa(CRUX, ['--data-dir', join(s.home, 'd'), 'hook', 'claude-code', '--bogus'], {
      input: '{}',
      reject: false,
      env: testEnv(),
      extendEnv: false,
    });
    expect(bad.exitCode).toBe(5);
    const malformed = join(s.cwd, '.claude', 'settings.json');
    fs.mkdirSync(dirname(malformed));
    fs.writeFileSync(malformed, '{"hooks": [');
    const refused = await run(s, ['hook', 'uninstall', 'claude-code']);
    expect([refused.exitCode, refused.stderr.includes(malformed)]).toEqual([5, true]);
    expect(fs.readFileSync(malformed, 'utf8')).toBe('{"hooks": [');
  });
});

// The store set by the environment, not a flag: the operator's CRUX_DATA_DIR or CRUX_STORE is what the agent gets,
// named in the entry, and install says so; --no-store leaves it to the agent's own environment, and says that.
describe('crux mcp install and hook install: the store the agent will use', () => {
  const URL_ = 'postgres://agent:s3cret-pw@db.invalid:5432/mem?schema=team';

  it('records CRUX_DATA_DIR in the entry and says so; --no-store leaves it out and says that', async () => {
    const s = setup();
    const data = join(s.home, 'ops data');
    const mcp = await run(s, ['mcp', 'install', 'cursor', '--json'], { env: { CRUX_DATA_DIR: data } });
    expect(mcp.exitCode).toBe(0);
    expect(JSON.parse(mcp.stdout).store).toEqual({ kind: 'dir', name: data, from: 'CRUX_DATA_DIR', recorded: true });
    expect(JSON.parse(fs.readFileSync(join(s.home, '.cursor/mcp.json'), 'utf8')).mcpServers.crux.args).toEqual([CRUX_SCRIPT, '--data-dir', data, 'mcp']);
    const hook = await run(s, ['hook', 'install', 'claude-code'], { env: { CRUX_DATA_DIR: data } });
    expect(hook.stdout).toContain(`the agent will use the data directory ${data} (from CRUX_DATA_DIR, named in the entry)`);
    const settings = join(s.cwd, '.claude', 'settings.json');
    expect(JSON.parse(fs.readFileSync(settings, 'utf8')).hooks.Stop[0].hooks[0].command).toBe(hookCommand(`--data-dir '${data}' hook claude-code`));

    const bare = await run(s, ['hook', 'install', 'claude-code', '--no-store'], { env: { CRUX_DATA_DIR: data } });
    expect(bare.stdout).toContain('the entry names no store (--no-store)');
    expect(JSON.parse(fs.readFileSync(settings, 'utf8')).hooks.Stop[0].hooks[0].command).toBe(hookCommand('hook claude-code'));
    const printed = await run(s, ['mcp', 'install', 'cursor', '--no-store', '--print'], { env: { CRUX_DATA_DIR: data } });
    expect(JSON.parse(printed.stdout).mcpServers.crux.args).toEqual([CRUX_SCRIPT, 'mcp']);
    // --no-store beside a store flag is a contradiction (2), and nothing is written.
    expect((await run(s, ['--data-dir', data, 'mcp', 'install', 'codex', '--no-store'])).exitCode).toBe(2);
    expect(fs.existsSync(join(s.home, '.codex'))).toBe(false);
  });

  it('records CRUX_STORE and names the server without its password; the default is said, not recorded', async () => {
    const s = setup();
    const mcp = await run(s, ['mcp', 'install', 'gemini-cli'], { env: { CRUX_STORE: URL_ } });
    expect(mcp.exitCode).toBe(0);
    expect(mcp.stdout).toContain('the agent will use the store postgres://agent@db.invalid:5432/mem?schema=team (from CRUX_STORE, named in the entry)');
    expect(mcp.stdout).not.toContain('s3cret-pw');
    expect(JSON.parse(fs.readFileSync(join(s.home, '.gemini/settings.json'), 'utf8')).mcpServers.crux.args).toEqual([CRUX_SCRIPT, '--store', URL_, 'mcp']);
    const hook = await run(s, ['hook', 'install', 'gemini-cli', '--json'], { env: { CRUX_STORE: URL_ } });
    expect(JSON.parse(hook.stdout).store).toMatchObject({ kind: 'postgres', from: 'CRUX_STORE', recorded: true });
    const plain = await run(s, ['mcp', 'install', 'claude-code', '--json']);
    expect(JSON.parse(plain.stdout).store).toEqual({ kind: 'dir', name: join(s.home, '.local/share/crux'), from: 'the default', recorded: false });
  });
});
