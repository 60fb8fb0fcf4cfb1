// What `case retrieve` does once its command line is parsed: commander's action (retrieve.ts) and the fast path
// (cli/fast) both call it, so either way the command runs the same code.
import { contextOf, type GlobalOptions } from '../../context';
import { emit } from '../../../output/emit';
import { renderRetrieved, retrievedIds } from '../../../output/case';
import { retrieve, retrieveQuery } from '../../operations/case';

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
  const query = retrieveQuery(words.join(' '), { ...opts, topK: opts.topK ?? opts.limit });
  await emit({ ...ctx, headers: opts.headers }, await retrieve(ctx, query, opts.markReused === true), renderRetrieved, retrievedIds);
}
