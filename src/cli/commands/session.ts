// `crux session …`: thin actions over the session store.
import type { Command } from 'commander';
import { buildContext, readInputFile, readStdin, type Context } from '../context';
import { withImportProgress } from '../import-progress';
import { thresholdsOf, type ThresholdFlags } from '../thresholds';
import { envCount, parseCount, parsePositiveDuration } from '../parse';
import { writeStdout } from '../../output/stdout';
import { emit, sentence } from '../../output/emit';
import { renderClose, renderDeleted, renderImported, renderListing, renderMachine, renderReap, renderSession } from '../../output/session';
import { parseLogicalSessionId } from '../../shared/ids';
import { parseTime } from '../../shared/time';
import { invalid, usage } from '../../shared/errors';
import { describeMachine } from '../../domain/session/machine';
import { spliceState } from '../../domain/session/lines';
import { acceptStateDocument, DEFAULT_MAX_STATE_BYTES } from '../../domain/session/state-document';
import * as store from '../../domain/session/store';

const DEFAULT_MAX_IMPORT_BYTES = 256 * 1024 * 1024;
const CLOSE_OUTCOMES = ['completed', 'failed', 'abandoned'] as const;

const scopeOf = (ctx: Context, flags?: ThresholdFlags): store.SessionScope => ({
  dir: ctx.dataDir,
  agent: ctx.agent,
  actor: ctx.actor,
  now: ctx.now,
  thresholds: thresholdsOf(ctx.env, flags),
});

const maxStateBytes = (ctx: Context) => envCount(ctx.env, 'CRUX_MAX_STATE_BYTES', DEFAULT_MAX_STATE_BYTES)!;

function readState(ctx: Context, json: string | undefined, file: string | undefined): string {
  const max = maxStateBytes(ctx);
  if (json !== undefined && file !== undefined) throw usage('give the state as an argument or with --file, not both');
  // `-` is never a JSON document: as the argument it means standard input, as everywhere else.
  const arg = json === '-' ? undefined : json;
  const bytes = arg !== undefined ? Buffer.from(arg) : file !== undefined ? readInputFile(file, max) : readStdin(max, 'standard input (the state)');
  return acceptStateDocument(bytes, max);
}


const ctxOf = (command: Command) => buildContext(command);

export function register(program: Command): void {
  const session = program.command('session').description('sessions: what an agent is doing (state kept byte-for-byte)');

  session
    .command('put <id> [json]')
    .description('create or replace a session state (from the argument, --file, or stdin: no argument or -)')
    .option('--file <path>', 'read the state from a file (- for stdin)')
    .option('--ttl <duration>', 'expire the session after this long (90s, 15m, 2h, 7d)')
    .option('--expires-at <time>', 'expire the session at this RFC 3339 time')
    .option('--tokens <n>', 'set total_tokens')
    .option('--add-tokens <n>', 'add to total_tokens')
    .option('--max-tokens <n>', 'refuse a total_tokens above this ceiling (env CRUX_SESSION_TOKEN_BUDGET)')
    .addHelpText('after', '\nExample:\n  crux session put build-42 \'{"step":3}\' --ttl 2h --add-tokens 1200')
    .action(async (rawId: string, json: string | undefined, opts, command: Command) => {
      const ctx = ctxOf(command);
      const id = parseLogicalSessionId(rawId);
      if (opts.ttl !== undefined && opts.expiresAt !== undefined) throw usage('give --ttl or --expires-at, not both');
      const cmd = {
        tokens: opts.tokens === undefined ? undefined : parseCount(opts.tokens, '--tokens'),
        addTokens: opts.addTokens === undefined ? undefined : parseCount(opts.addTokens, '--add-tokens'),
        maxTokens: opts.maxTokens === undefined ? envCount(ctx.env, 'CRUX_SESSION_TOKEN_BUDGET', undefined) : parseCount(opts.maxTokens, '--max-tokens'),
        ttlMs: opts.ttl === undefined ? undefined : parsePositiveDuration(opts.ttl, '--ttl'),
        expiresAt: opts.expiresAt === undefined ? undefined : parseTime(opts.expiresAt, '--expires-at'),
      };
      const view = await store.putSession(scopeOf(ctx), id, { ...cmd, state: readState(ctx, json, opts.file) });
      await emit(ctx, { session: view }, renderSession('stored'));
    });

  session
    .command('get <id>')
    .description('print the state bytes exactly as stored (--json: the whole record)')
    .addHelpText('after', '\nExample:\n  crux session get build-42 > state.json')
    .action(async (rawId: string, _opts, command: Command) => {
      const ctx = ctxOf(command);
      const { session: view, state } = store.getSession(scopeOf(ctx), parseLogicalSessionId(rawId));
      // Splice the stored bytes in as "state": JSON.stringify would re-encode numbers and key order.
      if (ctx.json) writeStdout(`{"session":${spliceState(JSON.stringify(view), state)}}\n`);
      else if (!ctx.quiet) writeStdout(state);
    });

  session
    .command('list')
    .alias('ls')
    .description('list sessions: active and handed-off ones, newest first (archived and closed only with --all)')
    .option('--all', 'every session, archived and closed included')
    .option('--archived', 'only archived sessions')
    .option('--stranded', 'only non-closed sessions whose freshness is stale')
    .option('--all-agents', "every agent's sessions, with an agent column (the operator's view)")
    .option('--fresh-for <duration>', 'fresh up to this age (env CRUX_FRESH_FOR, default 15m)')
    .option('--stale-after <duration>', 'stale beyond this age (env CRUX_STALE_AFTER, default 24h)')
    .addHelpText('after', '\nExamples:\n  crux session list --all-agents\n  crux session list --stranded --stale-after 2h --json')
    .action(async (opts, command: Command) => {
      const ctx = ctxOf(command);
      const filter = { all: opts.all === true, archived: opts.archived === true, stranded: opts.stranded === true, allAgents: opts.allAgents === true };
      const listing = store.listStoredSessions(scopeOf(ctx, opts), filter);
      await emit(ctx, { ...listing, all_agents: filter.allAgents }, renderListing);
    });

  session
    .command('archive <id>')
    .description('hide a session from default listings, kept in full (reversible with unarchive)')
    .option('--reason <text>', 'why (credentials in URLs are removed)')
    .addHelpText('after', '\nExample:\n  crux session archive build-42 --reason "superseded by build-43"')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = ctxOf(command);
      const view = await store.archiveSession(scopeOf(ctx), parseLogicalSessionId(rawId), opts.reason);
      await emit(ctx, { session: view }, renderSession('archived'));
    });

  session
    .command('unarchive <id>')
    .description('make an archived session active again')
    .addHelpText('after', '\nExample:\n  crux session unarchive build-42')
    .action(async (rawId: string, _opts, command: Command) => {
      const ctx = ctxOf(command);
      const view = await store.unarchiveSession(scopeOf(ctx), parseLogicalSessionId(rawId));
      await emit(ctx, { session: view }, renderSession('unarchived'));
    });

  session
    .command('delete <id>')
    .description('remove a session irreversibly, whatever its state (needs --yes)')
    .option('--yes', 'confirm the irreversible removal')
    .addHelpText('after', '\nExample:\n  crux session delete build-42 --yes')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = ctxOf(command);
      if (opts.yes !== true) throw usage('delete is irreversible: add --yes to confirm', 'or archive it instead: `crux session archive <id>`');
      const result = await store.deleteSession(scopeOf(ctx), parseLogicalSessionId(rawId));
      await emit(ctx, result, sentence(renderDeleted));
    });

  session
    .command('close <id>')
    .description('close a session exactly once; closing a closed session reports the original close (exit 0)')
    .option('--outcome <outcome>', `how it ended: ${CLOSE_OUTCOMES.join(' | ')}`, 'completed')
    .option('--summary <text>', 'a closing note (credentials in URLs are removed)')
    .addHelpText('after', '\nExample:\n  crux session close build-42 --outcome failed --summary "tests red"')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = ctxOf(command);
      const id = parseLogicalSessionId(rawId);
      if (!(CLOSE_OUTCOMES as readonly string[]).includes(opts.outcome)) {
        throw invalid(`--outcome must be one of ${CLOSE_OUTCOMES.join(', ')}: ${JSON.stringify(opts.outcome)}`, 'expired is the reaper\'s');
      }
      const result = await store.closeSession(scopeOf(ctx), id, { outcome: opts.outcome, summary: opts.summary });
      await emit(ctx, result, sentence(renderClose));
    });

  session
    .command('reap')
    .description('close every session past its expires_at with the outcome expired (all agents unless --agent)')
    .option('--dry-run', 'show what would be reaped; write nothing')
    .addHelpText('after', '\nExamples (cron):\n  */5 * * * * crux session reap --quiet\n  crux session reap --dry-run --json')
    .action(async (opts, command: Command) => {
      const ctx = ctxOf(command);
      const result = await store.reapSessions(scopeOf(ctx), { dryRun: opts.dryRun === true });
      await emit(ctx, result, sentence(renderReap));
    });

  session
    .command('machine')
    .description('the session state machine as data: states, transitions, the terminal state')
    .addHelpText('after', '\nExample:\n  crux session machine --json')
    .action(async (_opts, command: Command) => {
      await emit(ctxOf(command), describeMachine(), renderMachine);
    });

  session
    .command('export')
    .description('every session record, state included, as JSON Lines (an agent: only its own)')
    .option('--all-agents', "every agent's sessions even when an agent identity is set")
    .addHelpText('after', '\nExample:\n  crux session export > sessions.backup.jsonl')
    .action(async (opts, command: Command) => {
      const ctx = ctxOf(command);
      const lines = store.exportSessions(scopeOf(ctx), { allAgents: opts.allAgents === true });
      if (ctx.json) writeStdout(`{"sessions":[${lines.map((l) => l.slice(0, -1)).join(',')}]}\n`);
      else if (!ctx.quiet) writeStdout(lines.join(''));
    });

  session
    .command('import [file]')
    .description('read JSON Lines (a file, or - / nothing for stdin) and write them all in one append, or nothing')
    .addHelpText('after', '\nExample:\n  crux session import sessions.backup.jsonl')
    .action(async (file: string | undefined, _opts, command: Command) => {
      const ctx = ctxOf(command);
      const max = envCount(ctx.env, 'CRUX_MAX_IMPORT_BYTES', DEFAULT_MAX_IMPORT_BYTES)!;
      const input = file === undefined || file === '-' ? readStdin(max, 'standard input (the import)') : readInputFile(file, max);
      const summary = await withImportProgress(ctx, file, (onLine) => store.importSessions(scopeOf(ctx), input, { maxStateBytes: maxStateBytes(ctx), onLine }));
      await emit(ctx, summary, sentence(renderImported));
    });
}
