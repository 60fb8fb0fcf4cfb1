// The Claude Code plugin's and the Gemini CLI extension's hooks and server, run as their clients run them (the
// command from hooks/hooks.json by a shell, the plugin's options as CLAUDE_PLUGIN_OPTION_<KEY>), fed real
// payloads: they behave as `crux hook claude-code --record-cases` does, and find crux or say why not.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, tempDir, testEnv } from '../helpers/cli';
import { CLAUDE_CODE, GEMINI_CLI } from '../../src/cli/hook/clients';

const ROOT = resolve(__dirname, '../..');
const PLUGIN = join(ROOT, 'plugins', 'crux');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'claude-code');
const NOW = '2026-12-01T12:00:00.000Z';

const readJson = (path: string) => JSON.parse(fs.readFileSync(path, 'utf8'));
const commandsOf = (hooksFile: string) => {
  const hooks = readJson(hooksFile).hooks as Record<string, { hooks: { command: string }[] }[]>;
  return Object.fromEntries(Object.entries(hooks).map(([event, groups]) => [event, groups.flatMap((g) => g.hooks.map((h) => h.command))]));
};

/** A PATH with node, /usr/bin and /bin, and crux when asked. */
function pathWith(crux: boolean): string {
  const bin = tempDir('crux-plugin-bin-');
  fs.symlinkSync(process.execPath, join(bin, 'node'));
  if (crux) fs.symlinkSync(CRUX, join(bin, 'crux'));
  return `${bin}:/usr/bin:/bin`;
}

/** A hook command as Claude Code runs one: by a shell, ${CLAUDE_PLUGIN_ROOT} set, the payload on stdin. */
const runHook = (command: string, payload: string, env: Record<string, string | undefined>) =>
  execa('sh', ['-c', command], { input: payload, env: testEnv({ CRUX_NOW: NOW, ...env }), extendEnv: false, reject: false, stripFinalNewline: false });

/** The session of one Claude Code session, in the plugin's words and crux's, for comparing. */
function payloads(transcript: string) {
  const id = '8b5d2a6e-4c1f-4e7a-9d3b-2f6a1c0e9b47';
  const base = { session_id: id, transcript_path: transcript, cwd: ROOT, permission_mode: 'default' };
  return [
    { ...base, hook_event_name: 'SessionStart', source: 'startup' },
    { ...base, hook_event_name: 'UserPromptSubmit', prompt: 'fix the failing checkout test' },
    { ...base, hook_event_name: 'Stop', stop_hook_active: false },
    { ...base, hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' },
  ].map((p) => JSON.stringify(p));
}

const listed = async (dataDir: string, args: string[]) => {
  const r = await execa(CRUX, ['--data-dir', dataDir, ...args, '--json'], { env: testEnv(), extendEnv: false });
  return JSON.parse(String(r.stdout));
};
// What must be equal between two stores written the same way: everything but the ids and hashes they mint.
const comparable = (doc: unknown) => JSON.parse(JSON.stringify(doc, (k, v) => (['id', 'case_id', 'hash', 'prev_hash'].includes(k) ? '…' : v)));

describe('the Claude Code plugin', () => {
  it('hooks every event crux acts on with its launcher, and the skill and server are where Claude Code looks', () => {
    const commands = commandsOf(join(PLUGIN, 'hooks', 'hooks.json'));
    expect(Object.keys(commands).sort()).toEqual(Object.keys(CLAUDE_CODE.events).sort());
    for (const list of Object.values(commands)) expect(list).toEqual(['"${CLAUDE_PLUGIN_ROOT}/bin/crux-plugin" hook claude-code']);
    expect(readJson(join(PLUGIN, '.mcp.json')).mcpServers.crux).toMatchObject({ command: '${CLAUDE_PLUGIN_ROOT}/bin/crux-plugin', args: ['mcp'] });
    expect(fs.readFileSync(join(PLUGIN, 'skills', 'crux-memory', 'SKILL.md'), 'utf8')).toMatch(/^---\nname: crux-memory\ndescription: .+\n---\n/);
    const manifest = readJson(join(PLUGIN, '.claude-plugin', 'plugin.json'));
    expect(Object.keys(manifest.userConfig).sort()).toEqual(['agent', 'crux_path', 'data_dir', 'record_cases', 'store']);
    expect(readJson(join(ROOT, '.claude-plugin', 'marketplace.json')).plugins).toEqual([expect.objectContaining({ name: 'crux', source: './plugins/crux' })]);
    expect(manifest.version).toBe(readJson(join(ROOT, 'package.json')).version);
  });

  it('fed SessionStart, UserPromptSubmit, Stop and SessionEnd, does what `crux hook claude-code --record-cases` does', async () => {
    const home = tempDir('crux-plugin-');
    const transcript = join(home, 'transcript.jsonl');
    fs.copyFileSync(join(FIXTURES, 'transcript-two-prompts.jsonl'), transcript);
    const viaPlugin = join(home, 'plugin-data');
    const direct = join(home, 'direct-data');
    // A case to offer at the prompt, in both stores.
    for (const d of [viaPlugin, direct])
      await execa(
        CRUX,
        [
          '--data-dir',
          d,
          'case',
          'record',
          '--task',
          'fix the failing checkout test',
          '--action',
          'ran npm test, fixed the rounding in cart.ts',
          '--outcome',
          'tests pass',
        ],
        { env: testEnv({ CRUX_NOW: NOW }), extendEnv: false },
      );
    const commands = commandsOf(join(PLUGIN, 'hooks', 'hooks.json'));
    const env = {
      HOME: home,
      PATH: pathWith(true),
      CLAUDE_PLUGIN_ROOT: PLUGIN,
      CLAUDE_PLUGIN_OPTION_DATA_DIR: viaPlugin,
      CLAUDE_PLUGIN_OPTION_AGENT: 'claude-code',
      CLAUDE_PLUGIN_OPTION_RECORD_CASES: 'true',
      CLAUDE_PLUGIN_OPTION_STORE: '',
    };
    for (const payload of payloads(transcript)) {
      const event = JSON.parse(payload).hook_event_name as string;
      const plugin = await runHook(commands[event]![0]!, payload, env);
      const crux = await execa(CRUX, ['--data-dir', direct, 'hook', 'claude-code', '--record-cases'], {
        input: payload,
        env: testEnv({ HOME: home, CRUX_NOW: NOW }),
        extendEnv: false,
        reject: false,
        stripFinalNewline: false,
      });
      expect([plugin.exitCode, String(plugin.stderr)], event).toEqual([crux.exitCode, String(crux.stderr)]);
      const ids = (out: unknown) => String(out).replace(/\bc_[0-9a-f]{24}\b/g, 'c_…');
      expect(ids(plugin.stdout).replaceAll(viaPlugin, direct), event).toBe(ids(crux.stdout));
      if (event === 'SessionStart' || event === 'UserPromptSubmit') expect(JSON.parse(String(plugin.stdout)).hookSpecificOutput.hookEventName).toBe(event);
    }
    const sessions = await listed(viaPlugin, ['--agent', 'claude-code', 'session', 'list', '--all']);
    expect(sessions.sessions).toEqual([expect.objectContaining({ session_id: '8b5d2a6e-4c1f-4e7a-9d3b-2f6a1c0e9b47', status: 'closed' })]);
    expect(comparable(sessions)).toEqual(comparable(await listed(direct, ['--agent', 'claude-code', 'session', 'list', '--all'])));
    const cases = await listed(viaPlugin, ['case', 'list']);
    // The case recorded first, the first prompt's stretch (recorded at Stop: the second prompt closed it) and the
    // open stretch (recorded at SessionEnd).
    expect(cases.cases).toHaveLength(3);
    expect(comparable(cases)).toEqual(comparable(await listed(direct, ['case', 'list'])));
  });

  it('takes its options: an agent, a store, record_cases off', async () => {
    const home = tempDir('crux-plugin-');
    const transcript = join(home, 'transcript.jsonl');
    fs.copyFileSync(join(FIXTURES, 'transcript-two-prompts.jsonl'), transcript);
    const dataDir = join(home, 'data');
    const command = commandsOf(join(PLUGIN, 'hooks', 'hooks.json')).SessionStart![0]!;
    // The variables the user's shell may carry are overruled by the options, and both stores never reach crux.
    const env = {
      HOME: home,
      PATH: pathWith(true),
      CLAUDE_PLUGIN_ROOT: PLUGIN,
      CLAUDE_PLUGIN_OPTION_AGENT: 'reviewer',
      CLAUDE_PLUGIN_OPTION_DATA_DIR: dataDir,
      CLAUDE_PLUGIN_OPTION_RECORD_CASES: 'false',
      CRUX_STORE: 'postgres://nobody@127.0.0.1:1/none',
    };
    for (const payload of payloads(transcript)) expect((await runHook(command, payload, env)).exitCode).toBe(0);
    expect((await listed(dataDir, ['--agent', 'reviewer', 'session', 'list', '--all'])).sessions).toHaveLength(1);
    expect((await listed(dataDir, ['case', 'list'])).cases).toEqual([]);
  });

  it('without a crux to run: a hook exits 0 with one line on stderr, the server fails saying why', async () => {
    // A copy of the plugin away from the repository (as a marketplace fetched from git caches it), no crux on PATH.
    const copy = join(tempDir('crux-plugin-copy-'), 'crux');
    fs.cpSync(PLUGIN, copy, { recursive: true });
    const env = { HOME: tempDir(), PATH: pathWith(false), CLAUDE_PLUGIN_ROOT: copy };
    const hook = await runHook(`"${copy}/bin/crux-plugin" hook claude-code`, payloads('/nowhere')[0]!, env);
    expect(hook.exitCode).toBe(0);
    expect(String(hook.stderr)).toMatch(/^crux plugin: no crux to run: install it \(npm install -g crux\) or set the plugin's crux_path option\n$/);
    const server = await runHook(`"${copy}/bin/crux-plugin" mcp`, '', env);
    expect(server.exitCode).toBe(127);
    expect(String(server.stderr).trim().split('\n')).toHaveLength(1);
    // The crux_path option names one explicitly.
    const named = await runHook(`"${copy}/bin/crux-plugin" hook claude-code`, payloads('/nowhere')[0]!, {
      ...env,
      CLAUDE_PLUGIN_OPTION_CRUX_PATH: CRUX,
      CLAUDE_PLUGIN_OPTION_DATA_DIR: join(env.HOME, 'd'),
    });
    expect([named.exitCode, String(named.stderr)]).toEqual([0, '']);
    expect(JSON.parse(String(named.stdout)).hookSpecificOutput.hookEventName).toBe('SessionStart');
  });
});

describe('the Gemini CLI extension', () => {
  it('hooks every Gemini CLI event crux acts on, and its server runs as the gemini-cli agent', async () => {
    const manifest = readJson(join(ROOT, 'gemini-extension.json'));
    expect(manifest).toMatchObject({ name: 'crux', version: readJson(join(ROOT, 'package.json')).version, contextFileName: 'GEMINI.md' });
    expect(fs.existsSync(join(ROOT, manifest.contextFileName))).toBe(true);
    const commands = commandsOf(join(ROOT, 'hooks', 'hooks.json'));
    expect(Object.keys(commands).sort()).toEqual(Object.keys(GEMINI_CLI.events).sort());
    const home = tempDir('crux-gemini-');
    const dataDir = join(home, 'data');
    // Gemini CLI substitutes ${extensionPath} and ${/}; a setting nobody gave is an empty variable.
    const expand = (s: string) => s.replaceAll('${extensionPath}', ROOT).replaceAll('${/}', '/');
    const env = { HOME: home, PATH: pathWith(true), CRUX_DATA_DIR: dataDir, CRUX_AGENT: '', CRUX_STORE: '' };
    const start = JSON.stringify({
      session_id: 'g-1',
      transcript_path: join(home, 't.json'),
      cwd: ROOT,
      hook_event_name: 'SessionStart',
      source: 'startup',
      timestamp: NOW,
    });
    const r = await runHook(expand(commands.SessionStart![0]!), start, env);
    expect([r.exitCode, String(r.stderr)]).toEqual([0, '']);
    expect((await listed(dataDir, ['--agent', 'gemini-cli', 'session', 'list'])).sessions.map((s: { session_id: string }) => s.session_id)).toEqual(['g-1']);
    const server = manifest.mcpServers.crux;
    const initialize = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'session_list', arguments: {} } })}\n`;
    const hello = `${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } })}\n`;
    const answer = await execa(expand(server.command), server.args, {
      input: hello + initialize,
      env: testEnv({ ...env, ...server.env }),
      extendEnv: false,
      reject: false,
    });
    const lines = String(answer.stdout)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.find((l) => l.id === 1).result.structuredContent.sessions.map((s: { session_id: string }) => s.session_id)).toEqual(['g-1']);
  });
});
