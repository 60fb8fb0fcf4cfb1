// `crux session put <id> [json]`: create or replace a session state, from the argument, a file or stdin.
import { Command } from 'commander';
import { buildContext, readInputFile, readStdin, type Context } from '../../context';
import { parseCount, parsePositiveDuration } from '../../parse';
import { emit } from '../../../output/emit';
import { renderSession } from '../../../output/session';
import { parseLogicalSessionId } from '../../../shared/ids';
import { parseTime } from '../../../shared/time';
import { usage } from '../../../shared/errors';
import { acceptStateDocument } from '../../../domain/session/state-document';
import { putSession, tokenBudget } from '../../operations/session';
import { maxStateBytes } from '../../operations/scope';

function readState(ctx: Context, json: string | undefined, file: string | undefined): string {
  const max = maxStateBytes(ctx);
  if (json !== undefined && file !== undefined) throw usage('give the state as an argument or with --file, not both');
  // `-` is never a JSON document: as the argument it means standard input, as everywhere else.
  const arg = json === '-' ? undefined : json;
  const bytes = arg !== undefined ? Buffer.from(arg) : file !== undefined ? readInputFile(file, max) : readStdin(max, 'standard input (the state)');
  return acceptStateDocument(bytes, max);
}

export function makePutCommand(): Command {
  return new Command('put')
    .arguments('<id> [json]')
    .description('create or replace a session state (from the argument, --file, or stdin: no argument or -)')
    .option('--file <path>', 'read the state from a file (- for stdin)')
    .option('--ttl <duration>', 'expire the session after this long (90s, 15m, 2h, 7d)')
    .option('--expires-at <time>', 'expire the session at this RFC 3339 time')
    .option('--tokens <n>', 'set total_tokens')
    .option('--add-tokens <n>', 'add to total_tokens')
    .option('--max-tokens <n>', 'refuse a total_tokens above this ceiling (env CRUX_SESSION_TOKEN_BUDGET)')
    .addHelpText('after', '\nExample:\n  crux session put build-42 \'{"step":3}\' --ttl 2h --add-tokens 1200')
    .action(async (rawId: string, json: string | undefined, opts, command: Command) => {
      const ctx = buildContext(command);
      const id = parseLogicalSessionId(rawId);
      if (opts.ttl !== undefined && opts.expiresAt !== undefined) throw usage('give --ttl or --expires-at, not both');
      const cmd = {
        tokens: opts.tokens === undefined ? undefined : parseCount(opts.tokens, '--tokens'),
        addTokens: opts.addTokens === undefined ? undefined : parseCount(opts.addTokens, '--add-tokens'),
        maxTokens: tokenBudget(ctx, opts.maxTokens === undefined ? undefined : parseCount(opts.maxTokens, '--max-tokens')),
        ttlMs:
          opts.ttl === undefined ? undefined : parsePositiveDuration(opts.ttl, '--ttl', 'write it as 90s, 15m, 2h or 7d; --expires-at takes an exact time'),
        expiresAt: opts.expiresAt === undefined ? undefined : parseTime(opts.expiresAt, '--expires-at'),
      };
      await emit(ctx, await putSession(ctx, id, { ...cmd, state: readState(ctx, json, opts.file) }), renderSession('stored'));
    });
}
