// `crux case retrieve <query...>`: cases ranked by the similarity of their task and tags to the query.
import { Command } from 'commander';
import type { GlobalOptions } from '../../context';
import { DEFAULT_TOP_K } from '../../../domain/case/rank';
import { runRetrieve } from './run-retrieve';

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
    .action((words: string[], opts, command: Command) => runRetrieve(words, opts, command.optsWithGlobals<GlobalOptions>()));
}
