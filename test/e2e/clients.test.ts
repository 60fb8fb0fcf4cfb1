// crux where agents install things, checked by the real clients (test/helpers/clients.ts: pinned, from the npm
// registry, HOME a temp directory, no account, no network): Claude Code validates, installs and connects the
// plugin and runs its hooks in a session; `crux mcp install` entries connect in Claude Code and list in Codex;
// Gemini CLI installs the extension and connects its server. Each test says what it skipped and why.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CRUX, CRUX_SCRIPT, tempDir, testEnv } from '../helpers/cli';
import { type ClientName, clientEnv, clientsRequired, ensureClient } from '../helpers/clients';

const ROOT = resolve(__dirname, '../..');
const PLUGIN = join(ROOT, 'plugins', 'crux');
const bins: Partial<Record<ClientName, string>> = {};
const skipped: Partial<Record<ClientName, string>> = {};

beforeAll(async () => {
  for (const name of ['claude', 'gemini', 'codex'] as const) {
    const got = await ensureClient(name);
    if ('bin' in got) bins[name] = got.bin;
    else skipped[name] = got.skipped;
  }
}, 600_000);

/** The client's executable; the test is skipped (a failure under CRUX_REQUIRE_CLIENTS=1) when it is not here. */
function client(name: ClientName, ctx: { skip: (note?: string) => void }): string {
  const bin = bins[name];
  if (bin !== undefined) return bin;
  const why = skipped[name] ?? `${name} was not installed`;
  if (clientsRequired) throw new Error(`CRUX_REQUIRE_CLIENTS=1: ${why}`);
  ctx.skip(why);
  return '';
}

/** A HOME, a project in it, and a PATH with node (and crux when asked) but nothing else of this machine's. */
function world(opts: { cruxOnPath: boolean }) {
  const home = tempDir('crux-clients-');
  const project = join(home, 'project');
  const bin = join(home, 'bin');
  fs.mkdirSync(project);
  fs.mkdirSync(join(project, '.git'));
  fs.mkdirSync(bin);
  fs.symlinkSync(process.execPath, join(bin, 'node'));
  if (opts.cruxOnPath) fs.symlinkSync(CRUX, join(bin, 'crux'));
  const dataDir = join(home, 'data');
  const env = (extra: Record<string, string | undefined> = {}) => clientEnv(home, { PATH: `${bin}:/usr/bin:/bin`, CRUX_DATA_DIR: dataDir, ...extra });
  const run = (file: string, args: string[], extra: Record<string, string | undefined> = {}) =>
    execa(file, args, { cwd: project, env: env(extra), extendEnv: false, reject: false, timeout: 120_000, input: '' }).then((r) => ({
      exitCode: r.exitCode,
      stdout: String(r.stdout),
      stderr: String(r.stderr),
    }));
  const cruxJson = async (args: string[]) =>
    JSON.parse(String((await execa(CRUX, ['--data-dir', dataDir, ...args, '--json'], { env: testEnv(), extendEnv: false })).stdout));
  return { home, project, dataDir, env, run, cruxJson };
}

const initialize = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } })}\n`;

describe('Claude Code', () => {
  it('validates the plugin and the marketplace', async (ctx) => {
    const claude = client('claude', ctx);
    const w = world({ cruxOnPath: false });
    for (const path of [PLUGIN, ROOT]) {
      const r = await w.run(claude, ['plugin', 'validate', path]);
      expect(r.exitCode, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain('✔ Validation passed');
    }
    const r = await w.run(claude, ['plugin', 'validate', PLUGIN]);
    for (const part of ['hooks: SessionStart', 'hooks: SessionEnd', 'mcpServers: crux', 'skills: crux:crux-memory']) expect(r.stdout).toContain(part);
  }, 120_000);

  for (const { cruxOnPath, what } of [
    { cruxOnPath: true, what: 'crux on PATH' },
    { cruxOnPath: false, what: "the repository's own bin/crux (a local marketplace is read in place)" },
  ]) {
    it(`installs the plugin from the local marketplace; \`claude mcp list\` shows crux connected, running ${what}`, async (ctx) => {
      const claude = client('claude', ctx);
      const w = world({ cruxOnPath });
      const added = await w.run(claude, ['plugin', 'marketplace', 'add', ROOT]);
      expect(added.exitCode, added.stdout + added.stderr).toBe(0);
      const installed = await w.run(claude, ['plugin', 'install', 'crux@crux']);
      expect(installed.exitCode, installed.stdout + installed.stderr).toBe(0);
      const list = await w.run(claude, ['mcp', 'list']);
      expect(list.stdout).toMatch(/plugin:crux:crux: .*crux-plugin mcp - ✔ Connected/);
    }, 180_000);
  }

  it("runs the plugin's hooks in a real session: SessionStart creates the session, SessionEnd closes it and records a case", async (ctx) => {
    const claude = client('claude', ctx);
    const w = world({ cruxOnPath: true });
    expect((await w.run(claude, ['plugin', 'marketplace', 'add', ROOT])).exitCode).toBe(0);
    expect((await w.run(claude, ['plugin', 'install', 'crux@crux'])).exitCode).toBe(0);
    // No account and no network: the model's API is a closed port on loopback, so the turn fails at once, but
    // the session starts, the prompt is submitted and the session ends, each through the plugin's hooks.
    const session = await w.run(claude, ['-p', 'rename the config loader to settings loader'], {
      ANTHROPIC_API_KEY: 'sk-ant-offline',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      CLAUDE_CODE_MAX_RETRIES: '0',
    });
    expect(session.stdout + session.stderr).toMatch(/ECONNREFUSED|Connection refused|API Error/i);
    const { sessions } = await w.cruxJson(['--agent', 'claude-code', 'session', 'list', '--all']);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ status: 'closed' });
    const transcripts = fs
      .readdirSync(join(w.home, '.claude', 'projects'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.jsonl'));
    expect(transcripts.map((f) => f.split('/').pop()!.replace('.jsonl', ''))).toContain(sessions[0].session_id);
    const { cases } = await w.cruxJson(['case', 'list']);
    expect(cases).toHaveLength(1);
    expect(cases[0].task).toContain('rename the config loader to settings loader');
  }, 180_000);

  it('`crux hook install claude-code --record-cases` hooks a real session the same way, from the project settings, with no crux on PATH', async (ctx) => {
    const claude = client('claude', ctx);
    const w = world({ cruxOnPath: false });
    fs.mkdirSync(join(w.project, 'src'));
    const installed = await execa(CRUX, ['hook', 'install', 'claude-code', '--record-cases'], {
      cwd: join(w.project, 'src'),
      env: w.env(),
      extendEnv: false,
    });
    expect(String(installed.stdout)).toContain(join(w.project, '.claude', 'settings.json'));
    await w.run(claude, ['-p', 'bump the lockfile'], {
      ANTHROPIC_API_KEY: 'sk-ant-offline',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      CLAUDE_CODE_MAX_RETRIES: '0',
    });
    const { sessions } = await w.cruxJson(['--agent', 'claude-code', 'session', 'list', '--all']);
    expect(sessions.map((s: { status: string }) => s.status)).toEqual(['closed']);
    expect((await w.cruxJson(['case', 'list'])).cases.map((c: { task: string }) => c.task)).toEqual([expect.stringContaining('bump the lockfile')]);
    // Uninstalled, the next session leaves no trace.
    expect((await execa(CRUX, ['hook', 'uninstall', 'claude-code'], { cwd: w.project, env: w.env(), extendEnv: false })).exitCode).toBe(0);
    await w.run(claude, ['-p', 'again'], { ANTHROPIC_API_KEY: 'sk-ant-offline', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', CLAUDE_CODE_MAX_RETRIES: '0' });
    expect((await w.cruxJson(['--agent', 'claude-code', 'session', 'list', '--all'])).sessions).toHaveLength(1);
  }, 180_000);

  it('`crux mcp install claude-code` makes `claude mcp list` show crux connected, with no crux on PATH', async (ctx) => {
    const claude = client('claude', ctx);
    const w = world({ cruxOnPath: false });
    const installed = await execa(CRUX, ['--data-dir', w.dataDir, 'mcp', 'install', 'claude-code'], { cwd: w.project, env: w.env(), extendEnv: false });
    expect(installed.exitCode).toBe(0);
    const list = await w.run(claude, ['mcp', 'list']);
    expect(list.stdout).toContain(`crux: ${process.execPath} ${CRUX_SCRIPT} --data-dir ${w.dataDir} mcp - ✔ Connected`);
    expect((await execa(CRUX, ['mcp', 'uninstall', 'claude-code'], { cwd: w.project, env: w.env(), extendEnv: false })).exitCode).toBe(0);
    expect((await w.run(claude, ['mcp', 'list'])).stdout).not.toContain('crux:');
  }, 120_000);
});

describe('Gemini CLI', () => {
  it('installs the extension from the repository; `gemini mcp list` shows its server connected', async (ctx) => {
    const gemini = client('gemini', ctx);
    const w = world({ cruxOnPath: true });
    // The extension's files as a clone of the repository holds them (a clone has no node_modules to copy).
    const source = join(w.home, 'src', 'crux');
    fs.mkdirSync(source, { recursive: true });
    for (const part of ['gemini-extension.json', 'GEMINI.md', 'hooks', 'plugins']) fs.cpSync(join(ROOT, part), join(source, part), { recursive: true });
    fs.mkdirSync(join(w.home, '.gemini'));
    // Gemini CLI asks before it installs from, or runs in, a folder it has not been told to trust.
    fs.writeFileSync(join(w.home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [source]: 'TRUST_FOLDER', [w.project]: 'TRUST_FOLDER' }));
    const installed = await w.run(gemini, ['extensions', 'install', source, '--consent', '--skip-settings']);
    expect(installed.stdout + installed.stderr).toContain('Extension "crux" installed successfully and enabled.');
    const extension = join(w.home, '.gemini', 'extensions', 'crux');
    expect(JSON.parse(fs.readFileSync(join(extension, 'gemini-extension.json'), 'utf8')).name).toBe('crux');
    const list = await w.run(gemini, ['mcp', 'list']);
    // Gemini CLI writes the list on standard error.
    expect(list.stdout + list.stderr).toMatch(/✓ crux \(from crux\): .*crux-plugin mcp \(stdio\) - Connected/);
  }, 240_000);

  it('`crux mcp install gemini-cli` writes ~/.gemini/settings.json: `gemini mcp list` shows crux connected, with no crux on PATH', async (ctx) => {
    const gemini = client('gemini', ctx);
    const w = world({ cruxOnPath: false });
    fs.mkdirSync(join(w.home, '.gemini'));
    fs.writeFileSync(join(w.home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [w.project]: 'TRUST_FOLDER' }));
    const installed = await execa(CRUX, ['mcp', 'install', 'gemini-cli'], { cwd: w.project, env: w.env(), extendEnv: false });
    expect(String(installed.stdout)).toContain(`the agent will use the data directory ${w.dataDir} (from CRUX_DATA_DIR, named in the entry)`);
    const list = await w.run(gemini, ['mcp', 'list']);
    expect(list.stdout + list.stderr).toMatch(/✓ crux: .*crux\.cjs --data-dir \S+ mcp \(stdio\) - Connected/);
    expect((await execa(CRUX, ['mcp', 'uninstall', 'gemini-cli'], { cwd: w.project, env: w.env(), extendEnv: false })).exitCode).toBe(0);
    const after = await w.run(gemini, ['mcp', 'list']);
    expect(after.stdout + after.stderr).not.toMatch(/✓ crux:/);
  }, 240_000);
});

describe('Codex', () => {
  it('`crux mcp install codex` makes `codex mcp list` list crux, an entry that starts the server with an empty PATH', async (ctx) => {
    const codex = client('codex', ctx);
    const w = world({ cruxOnPath: false });
    const config = join(w.home, '.codex', 'config.toml');
    fs.mkdirSync(dirname(config));
    fs.writeFileSync(config, '# mine\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n');
    expect((await execa(CRUX, ['--data-dir', w.dataDir, 'mcp', 'install', 'codex'], { cwd: w.project, env: w.env(), extendEnv: false })).exitCode).toBe(0);
    const list = await w.run(codex, ['mcp', 'list', '--json']);
    expect(list.exitCode, list.stderr).toBe(0);
    const servers = JSON.parse(list.stdout) as { name: string; enabled: boolean; transport: { command: string; args: string[] } }[];
    expect(servers.map((s) => s.name).sort()).toEqual(['crux', 'docs']);
    const crux = servers.find((s) => s.name === 'crux')!;
    expect(crux).toMatchObject({ enabled: true, transport: { command: process.execPath, args: [CRUX_SCRIPT, '--data-dir', w.dataDir, 'mcp'] } });
    const server = await execa(crux.transport.command, crux.transport.args, { input: initialize, env: { PATH: '' }, extendEnv: false, reject: false });
    expect(JSON.parse(String(server.stdout).split('\n')[0]!)).toMatchObject({ id: 1, result: { serverInfo: { name: 'crux' } } });
    expect((await execa(CRUX, ['mcp', 'uninstall', 'codex'], { cwd: w.project, env: w.env(), extendEnv: false })).exitCode).toBe(0);
    expect(fs.readFileSync(config, 'utf8')).toBe('# mine\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n');
    expect(JSON.parse((await w.run(codex, ['mcp', 'list', '--json'])).stdout).map((s: { name: string }) => s.name)).toEqual(['docs']);
  }, 120_000);
});
