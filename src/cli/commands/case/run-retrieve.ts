// What `case retrieve` does once its command line is parsed: commander's action (retrieve.ts) and the fast path
// (cli/fast) both call it, so either way the command runs the same code.
import { contextOf, type GlobalOptions } from '../../context';
import { emit } from '../../../output/emit';
import { renderRetrieved, retrievedIds } from '../../../output/case';
import { DEFAULT_TOP_K, parseMinSimilarity, parseTopK } from '../../../domain/case/rank';
import { retrieve } from '../../operations/case';

/** The command's options by commander's attribute names. */
export interface RetrieveOptions {
  readonly topK?: string;
  readonly limit?: string;
  readonly onlySuccess?: boolean;
  readonly minSimilarity?: string;
  readonly markReused?: boolean;
  readonly headers: boolean;
}

export async function runRetrieve(words: readonly string[], opts: RetrieveOptions, globals: GlobalOptions): Promise<void> {
  const ctx = contextOf(globals);
  const topK = opts.topK ?? opts.limit;
  const query = {
    text: words.join(' '),
    topK: topK === undefined ? DEFAULT_TOP_K : parseTopK(topK),
    onlySuccess: opts.onlySuccess === true,
    minSimilarity: opts.minSimilarity === undefined ? 0 : parseMinSimilarity(opts.minSimilarity),
  };
  await emit({ ...ctx, headers: opts.headers }, await retrieve(ctx, query, opts.markReused === true), renderRetrieved, retrievedIds);
}
