// `crux hook claude-code`: one Claude Code hook payload from stdin, applied (SPEC §10.2); exit 5 on a bad one.
import { Command } from 'commander';
import { buildContext, readStdin } from '../../context';
import { parsePositiveDuration } from '../../parse';
import { writeStdout } from '../../../output/stdout';
import { DEFAULT_AGENT, runClaudeCodeHook } from '../../hook/claude-code';
import { parseMinSimilarity, parseTopK } from '../../../domain/case/rank';

const MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;
const DEFAULT_TTL = '24h';

export function makeClaudeCodeCommand(): Command {
  return new Command('claude-code')
    .description(`apply one Claude Code hook payload (stdin) to the session of its session_id, agent ${DEFAULT_AGENT} unless --agent`)
    .option('--ttl <duration>', `the lifetime of a session SessionStart creates (default ${DEFAULT_TTL})`)
    .option('--top-k <n>', 'UserPromptSubmit: at most this many similar cases (default 3)')
    .option('--min-similarity <x>', 'UserPromptSubmit: only cases at least this similar to the prompt, 0 to 1 (default 0.2)')
    .addHelpText(
      'after',
      [
        '',
        'Events: SessionStart creates or touches the session; UserPromptSubmit touches it and adds the successful cases',
        'most similar to the prompt as additionalContext; Stop, SubagentStop, PreCompact, Notification touch it;',
        'SessionEnd closes it once (completed for clear, logout, prompt_input_exit; else abandoned). Others: nothing.',
        'Never exits 2 (Claude Code reads 2 as "block"): a bad payload exits 5, a lock timeout 75.',
        '',
        'Examples:',
        '  crux hook install claude-code',
        `  echo '{"session_id":"s1","hook_event_name":"SessionStart","source":"startup","cwd":"/src"}' | crux hook claude-code`,
      ].join('\n'),
    )
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const answer = await runClaudeCodeHook(ctx, readStdin(MAX_PAYLOAD_BYTES, 'standard input (the hook payload)'), {
        ttlMs: parsePositiveDuration(opts.ttl ?? DEFAULT_TTL, '--ttl'),
        topK: parseTopK(opts.topK ?? '3'),
        minSimilarity: parseMinSimilarity(opts.minSimilarity ?? '0.2'),
      });
      if (answer !== undefined) writeStdout(`${answer}\n`);
    });
}
