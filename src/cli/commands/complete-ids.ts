// `crux __complete <session|case|handoff> [prefix]` (hidden): the ids a shell completes, one a line, those that
// start with what is typed and at most MAX_IDS of them, read from the data directory the command line names
// (--data-dir, --agent); read-only, and only the one list asked for.
import { Argument, Command } from 'commander';
import { buildContext, type Context } from '../context';
import { writeStdout } from '../../output/stdout';
import type { IdKind } from '../../output/completion';
import { sessionIdsStartingWith } from '../../domain/session/store';
import { sessionScope } from '../operations/scope';
import { caseIdsStartingWith } from '../../domain/case/store';
import { listHandoffs } from '../../domain/handoff/listing';
import { caseScope, handoffScope } from '../operations/scope';

/** A screenful: what a shell can usefully offer; typing more of the id narrows it. */
const MAX_IDS = 200;

const IDS: Record<IdKind, (ctx: Context, prefix: string) => Promise<string[]>> = {
  session: (ctx, prefix) => sessionIdsStartingWith(sessionScope(ctx), prefix, MAX_IDS),
  case: (ctx, prefix) => caseIdsStartingWith(caseScope(ctx), prefix, MAX_IDS),
  // `handoff export` takes a package minted here.
  handoff: async (ctx) =>
    (await listHandoffs(handoffScope(ctx))).handoffs.flatMap((h) => (h.direction === 'minted' && h.handoff_id !== null ? [h.handoff_id] : [])),
};

export function makeCompleteIdsCommand(): Command {
  return new Command('__complete')
    .description('the ids a shell completes (used by the completion scripts)')
    .addArgument(new Argument('<kind>').choices(Object.keys(IDS)))
    .addArgument(new Argument('[prefix]', 'only ids that start with it').default(''))
    .action(async (kind: IdKind, prefix: string, _opts, command: Command) => {
      const ids = (await IDS[kind](buildContext(command), prefix)).filter((id) => id.startsWith(prefix));
      // A name a shell cannot take as one word (a newline) is left out rather than split.
      writeStdout(
        [...new Set(ids)]
          .filter((id) => !id.includes('\n'))
          .slice(0, MAX_IDS)
          .map((id) => `${id}\n`)
          .join(''),
      );
    });
}
