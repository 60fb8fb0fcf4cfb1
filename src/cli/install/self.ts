// What an installed entry runs (`crux mcp install`, `crux hook install`): this Node binary on this crux script,
// both absolute, so that an agent that starts it without the shell's PATH finds it; and the store the agent will
// use, which the entry names when the install was told it (a flag, or CRUX_STORE / CRUX_DATA_DIR).
import type { Command } from 'commander';
import { fs } from '../../shared/fs';
import { basename, dirname, join } from 'node:path';
import { usage } from '../../shared/errors';
import type { AgentStore } from '../../output/install';
import type { GlobalOptions } from '../context';
import { parseStoreUrl } from '../../journal/pg/url';
import { resolveStore, type StoreTarget } from '../store';
import { startedAs } from '../started-as';

/**
 * This crux script, absolute (a symlink to it, npm's bin link or a checkout's bin/crux, followed). A checkout's
 * bin/crux is bin/pinned/crux.cjs, which names its Node in its first line and runs on PATH's (build.mjs): an entry
 * that names the Node itself runs the package's bin/crux.cjs beside it.
 */
export function cruxScript(): string {
  const script = fs.realpathSync(startedAs()!);
  const portable = join(dirname(dirname(script)), 'crux.cjs');
  return basename(dirname(script)) === 'pinned' && fs.existsSync(portable) ? portable : script;
}

/** A store's URL as messages name it: never the password; the schema when it is not the default. */
function labelOf(url: string, what: string, env: NodeJS.ProcessEnv): string {
  const parsed = parseStoreUrl(url, what, env);
  return parsed.schema === 'crux' ? parsed.label : `${parsed.label}${parsed.label.includes('?') ? '&' : '?'}schema=${parsed.schema}`;
}

const fromOf = (target: StoreTarget, globals: GlobalOptions): string => {
  if (target.source === 'flag') return globals.store !== undefined ? '--store' : '--data-dir';
  if (target.source === 'env') return target.kind === 'postgres' ? 'CRUX_STORE' : 'CRUX_DATA_DIR';
  return target.source === 'xdg' ? '$XDG_DATA_HOME' : 'the default';
};

/**
 * The arguments before the command that name the store and agent in an entry, and the store the agent will use.
 * A store from a flag or from CRUX_STORE / CRUX_DATA_DIR is recorded (unless `record` is false, --no-store: the
 * agent's own environment then decides); the default is never recorded.
 */
export function agentArgs(globals: GlobalOptions, env: NodeJS.ProcessEnv, record: boolean): { args: string[]; store: AgentStore } {
  if (!record && (globals.store !== undefined || globals.dataDir !== undefined))
    throw usage(`--no-store and ${globals.store !== undefined ? '--store' : '--data-dir'} contradict each other`, 'give one of them');
  const target = resolveStore(globals, env);
  const recorded = record && (target.source === 'flag' || target.source === 'env');
  const args: string[] = [];
  if (recorded) args.push(...(target.kind === 'postgres' ? ['--store', target.url] : ['--data-dir', target.path]));
  if (globals.agent !== undefined) args.push('--agent', globals.agent);
  const from = fromOf(target, globals);
  const name = target.kind === 'postgres' ? labelOf(target.url, from, env) : target.path;
  return { args, store: { kind: target.kind, name, from, recorded } };
}

/** What --no-store says in install's help. */
export const NO_STORE_HELP = 'leave the store that CRUX_STORE or CRUX_DATA_DIR names out of the entry: the agent uses what its own environment names';

/**
 * The global options an install command was given. Its own --no-store sets `store` to true or false among its
 * options, which would hide a global --store <url>: the globals are read from the commands above it.
 */
export const installGlobals = (command: Command): GlobalOptions => command.parent!.optsWithGlobals<GlobalOptions>();
