// What `session list` does once its command line is parsed: commander's action (list.ts) and the fast path
// (cli/fast) both call it, so either way the command runs the same code.
import { contextOf, type GlobalOptions } from '../../context';
import { listLimit } from '../../list-limit';
import { parseChoices, parseSort } from '../../parse';
import { emit } from '../../../output/emit';
import { stdoutIsTerminal } from '../../../output/terminal';
import { listingIds, renderListing } from '../../../output/session';
import { countedSessions } from '../../operations/session';
import { SESSION_ORDERS } from '../../../domain/list-window';
import { SESSION_STATES, type SessionStatus } from '../../../domain/session/machine';

/** The command's options by commander's attribute names: the filters, the window, --no-headers. */
export interface ListOptions {
  readonly all?: boolean;
  readonly archived?: boolean;
  readonly stranded?: boolean;
  readonly allAgents?: boolean;
  readonly status?: readonly string[];
  readonly freshFor?: string;
  readonly staleAfter?: string;
  readonly limit?: string;
  readonly sort?: string;
  readonly headers: boolean;
}

export async function runList(opts: ListOptions, globals: GlobalOptions): Promise<void> {
  const ctx = contextOf(globals);
  const statuses = parseChoices<SessionStatus>(opts.status, SESSION_STATES, '--status');
  const window = {
    sort: parseSort(opts.sort, SESSION_ORDERS),
    limit: listLimit(opts.limit, ctx),
    where: statuses && ((s: { status: string }) => (statuses as readonly string[]).includes(s.status)),
  };
  const filter = {
    all: opts.all === true || statuses !== undefined,
    archived: opts.archived === true,
    stranded: opts.stranded === true,
    allAgents: opts.allAgents === true,
  };
  // How many matched (for the line that ends a list cut short) is the table's, not the document's: only a table
  // on a terminal says it, so only it is counted (a limited --json list or pipe reads the rows it shows only).
  const count = !ctx.json && !ctx.quiet && stdoutIsTerminal();
  const { document, total } = await countedSessions(ctx, filter, { freshFor: opts.freshFor, staleAfter: opts.staleAfter }, window, { count, statuses });
  await emit({ ...ctx, headers: opts.headers }, document, (r, style) => renderListing({ ...r, total }, style), listingIds);
}
