// `crux hook install <client>`: merge crux's hooks into the agent's settings file, idempotently and atomically.
import { fs } from '../../../shared/fs';
import { dirname, join, resolve } from 'node:path';
import { Command } from 'commander';
import { buildContext, type GlobalOptions } from '../../context';
import { emit, sentence } from '../../../output/emit';
import { renderInstalled } from '../../../output/hook';
import { writeStdout } from '../../../output/stdout';
import { invalid, usage } from '../../../shared/errors';
import { fsyncDir, writeNewFileDurable } from '../../../journal/durable-fs';
import { mergeHooks } from '../../hook/settings';
import { clientNamed, HOOK_CLIENTS, type HookClient } from '../../hook/clients';

/** A word as a POSIX shell reads it back: as is when it is plain, else single-quoted. */
const shellWord = (word: string) => (/^[\w./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

/** The hook command: the global options given to install (an agent, a data directory) go with it. */
function hookCommand(client: HookClient, globals: GlobalOptions): string {
  const words = ['crux'];
  if (globals.dataDir !== undefined) words.push('--data-dir', resolve(globals.dataDir));
  if (globals.agent !== undefined) words.push('--agent', globals.agent);
  words.push('hook', client.name);
  return words.map(shellWord).join(' ');
}

function settingsPath(client: HookClient, opts: { settings?: string; user?: boolean }, env: NodeJS.ProcessEnv): string {
  if (opts.settings !== undefined && opts.user) throw usage('give --settings or --user, not both');
  if (opts.settings !== undefined) return resolve(opts.settings);
  if (opts.user) {
    if (!env.HOME) throw invalid('--user needs HOME', 'or name the file with --settings');
    return join(env.HOME, client.settingsFile);
  }
  return resolve(client.settingsFile);
}

function readSettings(path: string): { text: string; mode: number } {
  try {
    return { text: fs.readFileSync(path, 'utf8'), mode: fs.statSync(path).mode & 0o777 };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { text: '', mode: 0o644 };
    throw invalid(`cannot read ${path} (${code})`);
  }
}

/** Replaces the file atomically: a new file beside it (same mode), fsynced, renamed over it. */
function replaceFile(path: string, text: string, mode: number): void {
  fs.mkdirSync(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${path.split('/').pop()}.${process.pid}.tmp`);
  try {
    writeNewFileDurable(temp, text);
    fs.chmodSync(temp, mode);
    fs.renameSync(temp, path);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  fsyncDir(dirname(path));
}

export function makeInstallCommand(): Command {
  return new Command('install')
    .arguments('<client>')
    .description(`add the hooks of a coding agent (${HOOK_CLIENTS.map((c) => c.name).join(', ')}) to its settings file, keeping every other setting; a second install changes nothing`)
    .option('--settings <file>', 'the settings file (default .claude/settings.json or .gemini/settings.json under the current directory)')
    .option('--user', "the user's settings, ~/.claude/settings.json or ~/.gemini/settings.json")
    .option('--print', 'print the merged settings instead of writing them')
    .addHelpText('after', '\nExamples:\n  crux hook install claude-code\n  crux --agent reviewer hook install claude-code --user\n  crux hook install claude-code --print --settings .claude/settings.local.json\n  crux hook install gemini-cli')
    .action(async (name: string, opts, command: Command) => {
      const ctx = buildContext(command);
      const client = clientNamed(name);
      if (client === undefined) throw usage(`unknown client ${JSON.stringify(name)}`, `the clients are: ${HOOK_CLIENTS.map((c) => c.name).join(', ')}`);
      const path = settingsPath(client, opts, ctx.env);
      const existing = readSettings(path);
      const cmd = hookCommand(client, command.optsWithGlobals<GlobalOptions>());
      const merged = mergeHooks(client, existing.text, cmd, path);
      if (opts.print) {
        writeStdout(merged.changed ? merged.text : existing.text);
        return;
      }
      if (merged.changed) replaceFile(path, merged.text, existing.mode);
      await emit(ctx, { settings: path, changed: merged.changed, events: merged.events, command: cmd }, sentence(renderInstalled));
    });
}
