// `crux session …`: thin actions over the session store.
import type { Command } from 'commander';
import { buildContext, readInputFile, readStdin, type Context } from '../context';
import { envCount, parseCount } from '../parse';
import { emit } from '../../output/emit';
import { renderSession } from '../../output/session';
import { parseLogicalSessionId } from '../../shared/ids';
import { parseDuration, parseTime } from '../../shared/time';
import { usage } from '../../shared/errors';
import { acceptStateDocument, DEFAULT_MAX_STATE_BYTES } from '../../domain/session/state-document';
import { getSession, putSession, type SessionScope } from '../../domain/session/store';

const scopeOf = (ctx: Context): SessionScope => ({ dir: ctx.dataDir, agent: ctx.agent, now: ctx.now });

function readState(ctx: Context, json: string | undefined, file: string | undefined): string {
  const max = envCount(ctx.env, 'CRUX_MAX_STATE_BYTES', DEFAULT_MAX_STATE_BYTES)!;
  if (json !== undefined && file !== undefined) throw usage('give the state as an argument or with --file, not both');
  const bytes = json !== undefined ? Buffer.from(json) : file !== undefined ? readInputFile(file, max) : readStdin(max, 'standard input (the state)');
  return acceptStateDocument(bytes, max);
}

export function register(program: Command): void {
  const session = program.command('session').description('sessions: what an agent is doing (state kept byte-for-byte)');

  session
    .command('put <id> [json]')
    .description('create or replace a session state (from the argument, --file, or stdin)')
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
        state: readState(ctx, json, opts.file),
        tokens: opts.tokens === undefined ? undefined : parseCount(opts.tokens, '--tokens'),
        addTokens: opts.addTokens === undefined ? undefined : parseCount(opts.addTokens, '--add-tokens'),
        maxTokens: opts.maxTokens === undefined ? envCount(ctx.env, 'CRUX_SESSION_TOKEN_BUDGET', undefined) : parseCount(opts.maxTokens, '--max-tokens'),
        ttlMs: opts.ttl === undefined ? undefined : parseDuration(opts.ttl, '--ttl'),
        expiresAt: opts.expiresAt === undefined ? undefined : parseTime(opts.expiresAt, '--expires-at'),
        actor: ctx.actor,
      };
      const view = await putSession(scopeOf(ctx), id, cmd);
      await emit(ctx, { session: view }, renderSession('stored'));
    });

  session
    .command('get <id>')
    .description('print the state bytes exactly as stored (--json: the whole record)')
    .addHelpText('after', '\nExample:\n  crux session get build-42 > state.json')
    .action(async (rawId: string, _opts, command: Command) => {
      const ctx = buildContext(command);
      const { session: view, state } = getSession(scopeOf(ctx), parseLogicalSessionId(rawId));
      if (ctx.json) {
        // Splice the stored bytes in as "state": JSON.stringify would re-encode numbers and key order.
        const record = JSON.stringify(view);
        process.stdout.write(`{"session":${record.slice(0, -1)},"state":${state.trim()}}}\n`);
      } else if (!ctx.quiet) {
        process.stdout.write(state);
      }
    });
}
