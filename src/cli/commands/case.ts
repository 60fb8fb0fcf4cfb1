// `crux case …`: thin actions over the case store (procedural memory).
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { buildContext, readInputFile, readStdin, type Context } from '../context';
import { emit } from '../../output/emit';
import { renderCase, renderCaseList, renderDeleted, renderImported, renderRecorded, renderRetrieved } from '../../output/case';
import { usage, invalid } from '../../shared/errors';
import { newId, parseCaseId, type CaseId } from '../../shared/ids';
import { parseCaseDraft, parseRecordObject, type CaseDraft } from '../../domain/case/case';
import { parseImportLines } from '../../domain/case/import-lines';
import { DEFAULT_TOP_K, parseMinSimilarity, parseTopK } from '../../domain/case/rank';
import { deleteCase, importCases, listCases, recordCase, retrieveCases, showCase, type CaseScope } from '../../domain/case/store';

const MAX_STDIN_BYTES = 1024 * 1024;
const MAX_IMPORT_BYTES = 1024 * 1024 * 1024;
const FIELD_FLAGS = ['task', 'action', 'outcome', 'context', 'failure', 'reward', 'receipt'] as const;

const scopeOf = (ctx: Context): CaseScope => ({ dir: ctx.dataDir, now: ctx.now, actor: ctx.actor });
const newCaseId = () => newId<CaseId>('c');

// One read of the random source for a whole import instead of one per case.
function caseIdsFor(count: number): () => CaseId {
  const pool = randomBytes(12 * Math.max(count, 1));
  let next = 0;
  return () => (next < count ? newId<CaseId>('c', pool.subarray(12 * next, 12 * ++next)) : newCaseId());
}
const countLines = (input: Buffer) => {
  let n = 1;
  for (let i = input.indexOf(10); i !== -1; i = input.indexOf(10, i + 1)) n += 1;
  return n;
};
const collect = (value: string, previous: string[]) => [...previous, value];

function readDraft(opts: Record<string, any>): CaseDraft {
  if (opts.stdin) {
    const given = [...FIELD_FLAGS.filter((f) => opts[f] !== undefined), ...(opts.tag.length > 0 ? ['tag'] : [])];
    if (given.length > 0) throw usage(`give the case with --stdin or with flags, not both (--${given.join(', --')})`);
    const text = readStdin(MAX_STDIN_BYTES, 'standard input (the case)').toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw invalid(`standard input is not valid JSON (${(error as Error).message})`, 'one case object');
    }
    return parseRecordObject(value);
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
      const created = await recordCase(scopeOf(ctx), draft, newCaseId());
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
    .action(async (rawId: string, _opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, { case: showCase(scopeOf(ctx), parseCaseId(rawId)) }, renderCase);
    });

  group
    .command('list')
    .alias('ls')
    .description('every case, in the order they were written')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, { cases: listCases(scopeOf(ctx)) }, renderCaseList);
    });

  group
    .command('delete <id>')
    .description('remove a case outright (irreversible; needs --yes)')
    .option('--yes', 'really delete')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      if (opts.yes !== true) throw usage(`deleting case ${rawId} is irreversible: add --yes`);
      await emit(ctx, await deleteCase(scopeOf(ctx), parseCaseId(rawId)), renderDeleted);
    });

  group
    .command('export')
    .description('every case as JSON Lines on stdout (with or without --json), for backups and import')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      const cases = listCases(scopeOf(ctx));
      // Written in chunks: one string for 100k cases would be needlessly large.
      for (let i = 0; i < cases.length; i += 1000) {
        process.stdout.write(cases.slice(i, i + 1000).map((c) => `${JSON.stringify(c)}\n`).join(''));
      }
    });

  group
    .command('import [file]')
    .description('add cases from JSON Lines (a file, or - / nothing for stdin); one bad line refuses them all')
    .action(async (file: string | undefined, _opts, command: Command) => {
      const ctx = buildContext(command);
      const input = readInputFile(file ?? '-', MAX_IMPORT_BYTES);
      const cases = parseImportLines(input, caseIdsFor(countLines(input)), ctx.now);
      await emit(ctx, await importCases(scopeOf(ctx), cases), renderImported);
    });
}
