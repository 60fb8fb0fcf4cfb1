// `crux __complete <session|case|handoff>` (hidden): the ids a shell completes, one a line, read from the data
// directory the command line names (--data-dir, --agent); read-only, and only the one list asked for.
import { Argument, Command } from 'commander';
import { buildContext, type Context } from '../context';
import { writeStdout } from '../../output/stdout';
import type { IdKind } from '../../output/completion';
import { listSessions } from '../operations/session';
import { listCases } from '../../domain/case/store';
import { listHandoffs } from '../../domain/handoff/listing';
import { caseScope, handoffScope } from '../operations/scope';

const IDS: Record<IdKind, (ctx: Context) => Promise<string[]>> = {
  session: async (ctx) => (await listSessions(ctx, { all: true, archived: false, stranded: false, allAgents: false })).sessions.map((s) => s.session_id),
  case: async (ctx) => (await listCases(caseScope(ctx))).map((c) => c.case_id),
  // `handoff export` takes a package minted here.
  handoff: async (ctx) => (await listHandoffs(handoffScope(ctx))).handoffs.flatMap((h) => (h.direction === 'minted' && h.handoff_id !== null ? [h.handoff_id] : [])),
};

export function makeCompleteIdsCommand(): Command {
  return new Command('__complete')
    .description('the ids a shell completes (used by the completion scripts)')
    .addArgument(new Argument('<kind>').choices(Object.keys(IDS)))
    .action(async (kind: IdKind, _opts, command: Command) => {
      const ids = await IDS[kind](buildContext(command));
      // A name a shell cannot take as one word (a newline) is left out rather than split.
      writeStdout([...new Set(ids)].filter((id) => !id.includes('\n')).map((id) => `${id}\n`).join(''));
    });
}
