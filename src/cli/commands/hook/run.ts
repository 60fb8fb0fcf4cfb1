// `crux hook <client>`: one lifecycle hook payload from stdin, applied (SPEC §10.2); exit 5 on a bad one, never 2.
import { Command } from 'commander';
import { buildContext, readStdin } from '../../context';
import { parsePositiveDuration } from '../../parse';
import { writeStdout } from '../../../output/stdout';
import { runHook } from '../../hook/run';
import type { HookClient } from '../../hook/clients';
import { parseMinSimilarity, parseTopK } from '../../../domain/case/rank';

const MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;
const DEFAULT_TTL = '24h';

const eventsOf = (client: HookClient, effect: string) => Object.keys(client.events).filter((e) => client.events[e] === effect).join(', ');

export function makeHookRunCommand(client: HookClient): Command {
  return new Command(client.name)
    .description(`apply one ${client.label} hook payload (stdin) to the session of its session_id, agent ${client.defaultAgent} unless --agent`)
    .option('--ttl <duration>', `the lifetime of a session SessionStart creates (default ${DEFAULT_TTL})`)
    .option('--top-k <n>', `${eventsOf(client, 'prompt')}: at most this many similar cases (default 3)`)
    .option('--min-similarity <x>', `${eventsOf(client, 'prompt')}: only cases at least this similar to the prompt, 0 to 1 (default 0.2)`)
    .addHelpText(
      'after',
      [
        '',
        `Events: ${eventsOf(client, 'start')} creates or touches the session; ${eventsOf(client, 'prompt')} touches it and adds`,
        `the successful cases most similar to the prompt as additionalContext; ${eventsOf(client, 'touch')} touch it;`,
        `SessionEnd closes it once (completed for ${client.completedReasons.join(', ')}; else abandoned). Others: nothing.`,
        `Never exits 2 (${client.label} reads 2 as "block"): a bad payload exits 5, a lock timeout 75.`,
        '',
        'Examples:',
        `  crux hook install ${client.name}`,
        `  echo '{"session_id":"s1","hook_event_name":"SessionStart","source":"startup","cwd":"/src"}' | crux hook ${client.name}`,
      ].join('\n'),
    )
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const answer = await runHook(client, ctx, readStdin(MAX_PAYLOAD_BYTES, 'standard input (the hook payload)'), {
        ttlMs: parsePositiveDuration(opts.ttl ?? DEFAULT_TTL, '--ttl'),
        topK: parseTopK(opts.topK ?? '3'),
        minSimilarity: parseMinSimilarity(opts.minSimilarity ?? '0.2'),
      });
      if (answer !== undefined) writeStdout(`${answer}\n`);
    });
}
