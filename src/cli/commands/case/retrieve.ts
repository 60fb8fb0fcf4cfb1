// `crux case retrieve <query...>`: cases ranked by the similarity of their task and tags to the query.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderRetrieved, retrievedIds } from '../../../output/case';
import { DEFAULT_TOP_K, parseMinSimilarity, parseTopK } from '../../../domain/case/rank';
import { retrieve } from '../../operations/case';

export function makeRetrieveCommand(): Command {
  return new Command('retrieve')
    .arguments('<query...>')
    .description('ranked cases whose task or tags share words with the query (Jaccard similarity)')
    .option('--top-k <n>', `how many results (default ${DEFAULT_TOP_K}, at most 100)`)
    .option('--limit <n>', 'the same as --top-k (every list takes --limit)')
    .option('--only-success', 'leave out failed cases')
    .option('--min-similarity <x>', 'leave out matches below this similarity (0 to 1)')
    .option('--mark-reused', 'count each returned case as reused (journaled)')
    .option('--no-headers', 'leave out the header line of the table')
    .addHelpText('after', '\nExample:\n  crux case retrieve renew the tls certificate --only-success \\\n    --min-similarity 0.2')
    .action(async (words: string[], opts, command: Command) => {
      const ctx = buildContext(command);
      const query = {
        text: words.join(' '),
        topK: (opts.topK ?? opts.limit) === undefined ? DEFAULT_TOP_K : parseTopK(opts.topK ?? opts.limit),
        onlySuccess: opts.onlySuccess === true,
        minSimilarity: opts.minSimilarity === undefined ? 0 : parseMinSimilarity(opts.minSimilarity),
      };
      await emit({ ...ctx, headers: opts.headers }, await retrieve(ctx, query, opts.markReused === true), renderRetrieved, retrievedIds);
    });
}
