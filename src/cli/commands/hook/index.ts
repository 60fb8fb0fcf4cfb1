// `crux hook …`: lifecycle hooks of coding agents (SPEC §10.2), and their installation into the agent's settings.
// `crux hook <client>`: one lifecycle hook payload from stdin, applied; exit 5 on a bad one, never 2.
import { Command } from 'commander';
import { contextOf, readStdin, type GlobalOptions } from '../../context';
import { parsePositiveDuration } from '../../parse';
import { writeStdout } from '../../../output/stdout';
import { runHook } from '../../hook/run';
import { CLAUDE_CODE, GEMINI_CLI, type HookClient } from '../../hook/clients';
import { parseMinSimilarity, parseTopK } from '../../../domain/case/rank';
import { makeGroup } from '../group';
import { makeInstallCommand, makeUninstallCommand } from './install';

const MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;
const DEFAULT_TTL = '24h';

const eventsOf = (client: HookClient, effect: string) =>
  Object.keys(client.events)
    .filter((e) => client.events[e] === effect)
    .join(', ');

function helpText(client: HookClient): string[] {
  const lines = [
    '',
    'Events:',
    `  ${eventsOf(client, 'start')}: creates or touches the session; answers additionalContext`,
    '    naming it (id, agent, the MCP tools) and, for a resume or compact, this',
    "    project's successful cases most similar to the transcript's last prompt",
    `  ${eventsOf(client, 'prompt')}: touches it; adds the successful cases most similar`,
    '    to the prompt',
    `  ${eventsOf(client, 'touch')}: touch it`,
    '  SessionEnd: closes it once (completed for',
    `    ${client.completedReasons.join(', ')}; else abandoned)`,
    '  others: nothing',
  ];
  if (client.turnEnd !== undefined) {
    lines.push(
      `--record-cases: SessionEnd (and ${client.turnEnd}, for the stretch a newer prompt`,
      '  closed) first records one case from the transcript: task, the prompts since',
      '  the last case; action, the tools, commands and files changed; outcome, the',
      '  end reason and last results; tag, the project. A missing, torn or oversized',
      '  transcript (CRUX_MAX_TRANSCRIPT_BYTES, default 64 MiB) records nothing:',
      '  exit 0, one line on stderr.',
    );
  }
  lines.push(
    `Never exits 2 (${client.label} reads 2 as "block"): a bad payload exits 5,`,
    'a lock timeout 75.',
    '',
    'Examples:',
    `  crux hook install ${client.name}`,
    `  echo '{"session_id":"s1","hook_event_name":"Stop"}' |`,
    `    crux hook ${client.name}`,
  );
  return lines;
}

function makeHookRunCommand(client: HookClient): Command {
  const command = new Command(client.name)
    .description(`apply one ${client.label} hook payload (stdin) to the session of its session_id, agent ${client.defaultAgent} unless --agent`)
    .option('--ttl <duration>', `the lifetime of a session SessionStart creates (default ${DEFAULT_TTL})`)
    .option('--top-k <n>', `${eventsOf(client, 'prompt')}, SessionStart: at most this many similar cases (default 3)`)
    .option('--min-similarity <x>', `${eventsOf(client, 'prompt')}, SessionStart: only cases at least this similar, 0 to 1 (default 0.2)`);
  // Accepted for every client, so that one installed command line never fails; only some transcripts are read.
  command.option(
    '--record-cases',
    client.turnEnd === undefined
      ? `SessionEnd: record a case from the transcript (not for ${client.label}, whose transcripts crux does not read: says so)`
      : `SessionEnd (and ${client.turnEnd}, once a newer prompt closed a stretch): record a case from the transcript`,
  );
  return command.addHelpText('after', helpText(client).join('\n')).action(async (opts, cmd: Command) => {
    const globals = cmd.optsWithGlobals<GlobalOptions>();
    // The hook's agent: --agent, else CRUX_AGENT, else the client's own name; every operation scopes to it.
    const ctx = contextOf({ ...globals, agent: globals.agent ?? (process.env.CRUX_AGENT || client.defaultAgent) });
    const answer = await runHook(client, ctx, readStdin(MAX_PAYLOAD_BYTES, 'standard input (the hook payload)'), {
      ttlMs: parsePositiveDuration(opts.ttl ?? DEFAULT_TTL, '--ttl'),
      topK: parseTopK(opts.topK ?? '3'),
      minSimilarity: parseMinSimilarity(opts.minSimilarity ?? '0.2'),
      recordCases: opts.recordCases === true,
    });
    if (answer !== undefined) writeStdout(`${answer}\n`);
  });
}

const COMMANDS = {
  'claude-code': () => makeHookRunCommand(CLAUDE_CODE),
  'gemini-cli': () => makeHookRunCommand(GEMINI_CLI),
  install: makeInstallCommand,
  uninstall: makeUninstallCommand,
};

export function makeHookCommand(wanted?: string): Command {
  return makeGroup('hook', "lifecycle hooks of coding agents: sessions that follow the agent's own (never exit 2)", COMMANDS, wanted);
}
