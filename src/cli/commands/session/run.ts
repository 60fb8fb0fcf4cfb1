// What `session get`, `put` and `close` do once their command line is parsed: commander's actions (get.ts, put.ts,
// close.ts) and the fast path (cli/fast) both call these, so either way a command runs the same code.
import { contextOf, readInputFile, readStdin, type Context, type GlobalOptions } from '../../context';
import { parseCount, parsePositiveDuration } from '../../parse';
import { writeStdout } from '../../../output/stdout';
import { emit, sentence, withWarnings, writeJson } from '../../../output/emit';
import { renderClose, renderSession } from '../../../output/session';
import { stdoutIsTerminal } from '../../../output/terminal';
import { parseLogicalSessionId } from '../../../shared/ids';
import { parseTime } from '../../../shared/time';
import { usage } from '../../../shared/errors';
import { acceptStateDocument } from '../../../domain/session/state-document';
import { parseHistoryPoint } from '../../../domain/session/history';
import { closeSession, getSession, parseCloseOutcome, putSession, tokenBudget } from '../../operations/session';
import { maxStateBytes } from '../../operations/scope';

/** Each command's own options, by commander's attribute names (`--expires-at`: expiresAt). */
type Options = Readonly<Record<string, string | undefined>>;

export async function runGet(rawId: string, opts: Options, globals: GlobalOptions): Promise<void> {
  const ctx = contextOf(globals);
  const at = opts.at === undefined ? undefined : parseHistoryPoint(opts.at);
  const { state, documentText } = await getSession(ctx, parseLogicalSessionId(rawId), at);
  if (ctx.json) writeJson(`${withWarnings(documentText, ctx.warnings)}\n`);
  // What get exists to print: --quiet does not suppress it (SPEC §8). On a terminal the prompt gets a line of
  // its own and a C1 or bidi control inside a string shows as its \uXXXX escape (the same JSON).
  else if (!stdoutIsTerminal()) writeStdout(state);
  else writeJson(state.endsWith('\n') ? state : `${state}\n`);
}

function readState(ctx: Context, json: string | undefined, file: string | undefined): string {
  const max = maxStateBytes(ctx);
  if (json !== undefined && file !== undefined) throw usage('give the state as an argument or with --file, not both');
  // `-` is never a JSON document: as the argument it means standard input, as everywhere else.
  const arg = json === '-' ? undefined : json;
  const bytes = arg !== undefined ? Buffer.from(arg) : file !== undefined ? readInputFile(file, max) : readStdin(max, 'standard input (the state)');
  return acceptStateDocument(bytes, max);
}

export async function runPut(rawId: string, json: string | undefined, opts: Options, globals: GlobalOptions): Promise<void> {
  const ctx = contextOf(globals);
  const id = parseLogicalSessionId(rawId);
  if (opts.ttl !== undefined && opts.expiresAt !== undefined) throw usage('give --ttl or --expires-at, not both');
  const cmd = {
    tokens: opts.tokens === undefined ? undefined : parseCount(opts.tokens, '--tokens'),
    addTokens: opts.addTokens === undefined ? undefined : parseCount(opts.addTokens, '--add-tokens'),
    maxTokens: tokenBudget(ctx, opts.maxTokens === undefined ? undefined : parseCount(opts.maxTokens, '--max-tokens')),
    ttlMs: opts.ttl === undefined ? undefined : parsePositiveDuration(opts.ttl, '--ttl', 'write it as 90s, 15m, 2h or 7d; --expires-at takes an exact time'),
    expiresAt: opts.expiresAt === undefined ? undefined : parseTime(opts.expiresAt, '--expires-at'),
  };
  await emit(ctx, await putSession(ctx, id, { ...cmd, state: readState(ctx, json, opts.file) }), renderSession('stored'));
}

export async function runClose(rawId: string, opts: Options, globals: GlobalOptions): Promise<void> {
  const ctx = contextOf(globals);
  const id = parseLogicalSessionId(rawId);
  const result = await closeSession(ctx, id, { outcome: parseCloseOutcome(opts.outcome!), summary: opts.summary });
  await emit(ctx, result, sentence(renderClose));
}
