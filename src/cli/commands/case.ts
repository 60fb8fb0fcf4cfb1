// `crux case …`: thin actions over the case store (procedural memory).
import type { Command } from 'commander';
import { buildContext, readInputFile, readStdin, type Context } from '../context';
import { withImportProgress } from '../import-progress';
import { envCount } from '../parse';
import { emit } from '../../output/emit';
import { writeStdout } from '../../output/stdout';
import { renderCase, renderCaseList, renderDeleted, renderImported, renderRecorded, renderRetrieved } from '../../output/case';
import { usage } from '../../shared/errors';
import { newId, parseCaseId, type CaseId } from '../../shared/ids';
import { parseCaseDraft, parseRecordJson, type CaseDraft } from '../../domain/case/case';
import { parseImportLines } from '../../domain/case/import-lines';
import { DEFAULT_TOP_K, parseMinSimilarity, parseTopK } from '../../domain/case/rank';
import { deleteCase, importCases, listCases, recordCase, retrieveCases, showCase, type CaseScope } from '../../domain/case/store';

const MAX_STDIN_BYTES = 1024 * 1024;
const DEFAULT_MAX_IMPORT_BYTES = 1024 * 1024 * 1024;
const FIELD_FLAGS = ['task', 'action', 'outcome', 'context', 'failure', 'reward', 'receipt'] as const;

const scopeOf = (ctx: Context): CaseScope => ({ dir: ctx.dataDir, now: ctx.now, actor: ctx.actor });
// Ids drawn from the random source a thousand at a time: importing 100k cases makes 100 reads, not 100k.
function caseIdSource(): () => CaseId {
  let pool = Buffer.alloc(0);
  let next = 0;
  return () => {
    // node:crypto is loaded only when an id is needed: retrieve never pays for it.
    if (next === pool.length) [pool, next] = [(require('node:crypto') as typeof import('node:crypto')).randomBytes(12 * 1000), 0];
    return newId<CaseId>('c', pool.subarray(next, (next += 12)));
  };
}
const collect = (value: string, previous: string[]) => [...previous, value];

function readDraft(opts: Record<string, any>): CaseDraft {
  if (opts.stdin) {
    const given = [...FIELD_FLAGS.filter((f) => opts[f] !== undefined), ...(opts.tag.length > 0 ? ['tag'] : [])];
    if (given.length > 0) throw usage(`give the case with --stdin or with flags, not both (--${given.join(', --')})`);
    return parseRecordJson(readStdin(MAX_STDIN_BYTES, 'standard input (the case)').toString('utf8'));
  }
  for (const flag of ['task', 'action', 'outcome'] as const) {
    if (opts[flag] === undefined) throw usage(`--${flag} is required`, 'or give the whole case as a JSON object with --stdin');
  }
  return parseCaseDraft({
    task: opts.task, action: opts.action, outcome: opts.outcome, context: opts.context,
    success: !opts.failure, reward: opts.reward, tags: opts.tag, source_receipt: opts.receipt,
  });
}

export function register(program: Command): void {
  const group = program.command('case').description('cases: what an agent did and how it turned out (procedural memory)');

  group
    .command('record')
    .description('record a case and print its id')
    .option('--task <text>', 'what was to be done (the retrieval key)')
    .option('--action <text>', 'what was done')
    .option('--outcome <text>', 'how it turned out')
    .option('--context <text>', 'the circumstances')
    .option('--failure', 'the attempt failed (success is false)')
    .option('--reward <r>', 'a number, clamped to [0,1] (default 1.0)')
    .option('--tag <tag>', 'a tag, also matched by retrieve (repeatable)', collect, [])
    .option('--receipt <text>', 'a source receipt, e.g. of the run')
    .option('--stdin', 'read one JSON object with the same fields (task, action, outcome, context, success, reward, tags, source_receipt)')
    .addHelpText('after', '\nExample:\n  crux case record --task "rotate the TLS cert" --action "certbot renew" --outcome "renewed" --tag tls')
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const draft = readDraft(opts);
      const created = await recordCase(scopeOf(ctx), draft, newId<CaseId>('c'));
      await emit(ctx, { case: created }, renderRecorded);
    });

  group
    .command('retrieve <query...>')
    .description('ranked cases whose task or tags share words with the query (Jaccard similarity)')
    .option('--top-k <n>', `how many results (default ${DEFAULT_TOP_K}, at most 100)`)
    .option('--only-success', 'leave out failed cases')
    .option('--min-similarity <x>', 'leave out matches below this similarity (0 to 1)')
    .option('--mark-reused', 'count each returned case as reused (journaled)')
    .addHelpText('after', '\nExample:\n  crux case retrieve renew the tls certificate --only-success --min-similarity 0.2')
    .action(async (words: string[], opts, command: Command) => {
      const ctx = buildContext(command);
      const query = {
        text: words.join(' '),
        topK: opts.topK === undefined ? DEFAULT_TOP_K : parseTopK(opts.topK),
        onlySuccess: opts.onlySuccess === true,
        minSimilarity: opts.minSimilarity === undefined ? 0 : parseMinSimilarity(opts.minSimilarity),
      };
      const results = await retrieveCases(scopeOf(ctx), query, opts.markReused === true);
      await emit(ctx, { results }, renderRetrieved);
    });

  group
    .command('show <id>')
    .description('one case, every field')
    .addHelpText('after', '\nExample:\n  crux case show c_5f0c2a9e1b7d4c3a2f1e0d9c')
    .action(async (rawId: string, _opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, { case: showCase(scopeOf(ctx), parseCaseId(rawId)) }, renderCase);
    });

  group
    .command('list')
    .alias('ls')
    .description('every case, in the order they were written')
    .addHelpText('after', '\nExample:\n  crux --json case list')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, { cases: listCases(scopeOf(ctx)) }, renderCaseList);
    });

  group
    .command('delete <id>')
    .description('remove a case outright (irreversible; needs --yes)')
    .option('--yes', 'really delete')
    .addHelpText('after', '\nExample:\n  crux case delete c_5f0c2a9e1b7d4c3a2f1e0d9c --yes')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      if (opts.yes !== true) throw usage(`deleting case ${rawId} is irreversible: add --yes`);
      await emit(ctx, await deleteCase(scopeOf(ctx), parseCaseId(rawId)), renderDeleted);
    });

  group
    .command('export')
    .description('every case as JSON Lines, for backups and import (--json: one {"cases": [...]} document)')
    .addHelpText('after', '\nExample:\n  crux case export > cases.backup.jsonl')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      const lines = listCases(scopeOf(ctx)).map((c) => JSON.stringify(c));
      if (ctx.json) writeStdout(`{"cases":[${lines.join(',')}]}\n`);
      else if (!ctx.quiet) writeStdout(lines.map((line) => `${line}\n`).join(''));
    });

  group
    .command('import [file]')
    .description('add cases from JSON Lines (a file, or - / nothing for stdin); one bad line refuses them all')
    .addHelpText('after', '\nExample:\n  crux case import cases.backup.jsonl')
    .action(async (file: string | undefined, _opts, command: Command) => {
      const ctx = buildContext(command);
      const max = envCount(ctx.env, 'CRUX_MAX_IMPORT_BYTES', DEFAULT_MAX_IMPORT_BYTES)!;
      const input = readInputFile(file ?? '-', max);
      const summary = await withImportProgress(ctx, file, (onLine) => importCases(scopeOf(ctx), parseImportLines(input, caseIdSource(), ctx.now, onLine)));
      await emit(ctx, summary, renderImported);
    });
}
