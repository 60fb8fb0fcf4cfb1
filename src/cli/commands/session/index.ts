// `crux session …`: the group and its commands, one factory each (add a command: a factory, here or in a file of
// its own, and a line in COMMANDS).
import { Command } from 'commander';
import { makeGroup } from '../group';
import { buildContext } from '../../context';
import { emit, sentence, withWarnings, writeJson } from '../../../output/emit';
import { renderDeleted, renderMachine, renderReap, renderSession } from '../../../output/session';
import { usage } from '../../../shared/errors';
import { parseLogicalSessionId } from '../../../shared/ids';
import { describeMachine } from '../../../domain/session/machine';
import { deleteSession, exportSessions, reapSessions } from '../../../domain/session/store';
import { archiveSession, unarchiveSession } from '../../operations/session';
import { sessionScope as scopeOf } from '../../operations/scope';
import { makeCloseCommand, makeGetCommand, makePutCommand } from './state';
import { makeHistoryCommand } from './history';
import { makeListCommand } from './list';
import { makeImportCommand } from './import';

const makeArchiveCommand = () =>
  new Command('archive')
    .arguments('<id>')
    .description('hide a session from default listings, kept in full (reversible with unarchive)')
    .option('--reason <text>', 'why (credentials in URLs are removed)')
    .addHelpText('after', '\nExample:\n  crux session archive build-42 --reason "superseded by build-43"')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, await archiveSession(ctx, parseLogicalSessionId(rawId), opts.reason), renderSession('archived'));
    });

const makeUnarchiveCommand = () =>
  new Command('unarchive')
    .arguments('<id>')
    .description('make an archived session active again')
    .addHelpText('after', '\nExample:\n  crux session unarchive build-42')
    .action(async (rawId: string, _opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, await unarchiveSession(ctx, parseLogicalSessionId(rawId)), renderSession('unarchived'));
    });

const makeDeleteCommand = () =>
  new Command('delete')
    .arguments('<id>')
    .description('remove a session irreversibly, whatever its state (needs --yes)')
    .option('--yes', 'confirm the irreversible removal')
    .addHelpText('after', '\nExample:\n  crux session delete build-42 --yes')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      if (opts.yes !== true) throw usage('delete is irreversible: add --yes to confirm', 'or archive it instead: `crux session archive <id>`');
      await emit(ctx, await deleteSession(scopeOf(ctx), parseLogicalSessionId(rawId)), sentence(renderDeleted));
    });

/** Every expired session closed with the outcome expired (cron's command). */
const makeReapCommand = () =>
  new Command('reap')
    .description('close every session past its expires_at with the outcome expired (all agents unless --agent)')
    .option('--dry-run', 'show what would be reaped; write nothing')
    .addHelpText('after', '\nExamples (cron):\n  */5 * * * * crux session reap --quiet\n  crux session reap --dry-run --json')
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, await reapSessions(scopeOf(ctx), { dryRun: opts.dryRun === true }), sentence(renderReap));
    });

const makeMachineCommand = () =>
  new Command('machine')
    .description('the session state machine as data: states, transitions, the terminal state')
    .addHelpText('after', '\nExample:\n  crux session machine --json')
    .action(async (_opts, command: Command) => {
      await emit(buildContext(command), describeMachine(), renderMachine);
    });

const makeExportCommand = () =>
  new Command('export')
    .description('every session record, state included, as JSON Lines (an agent: only its own)')
    .option('--all-agents', "every agent's sessions even when an agent identity is set")
    .addHelpText('after', '\nExample:\n  crux session export > sessions.backup.jsonl')
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const lines = await exportSessions(scopeOf(ctx), { allAgents: opts.allAgents === true });
      if (ctx.json) writeJson(`${withWarnings(`{"sessions":[${lines.map((l) => l.slice(0, -1)).join(',')}]}`, ctx.warnings)}\n`);
      else writeJson(lines.join('')); // what export exists to print, --quiet or not
    });

const COMMANDS = {
  put: makePutCommand,
  get: makeGetCommand,
  history: makeHistoryCommand,
  list: makeListCommand,
  archive: makeArchiveCommand,
  unarchive: makeUnarchiveCommand,
  delete: makeDeleteCommand,
  close: makeCloseCommand,
  reap: makeReapCommand,
  machine: makeMachineCommand,
  export: makeExportCommand,
  import: makeImportCommand,
};

export function makeSessionCommand(wanted?: string): Command {
  return makeGroup('session', 'sessions: what an agent is doing (state kept byte-for-byte)', COMMANDS, wanted);
}
