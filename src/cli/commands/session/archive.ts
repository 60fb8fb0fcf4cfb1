// `crux session archive | unarchive <id>`: hide a session from default listings, and bring it back.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderSession } from '../../../output/session';
import { parseLogicalSessionId } from '../../../shared/ids';
import { archiveSession, unarchiveSession } from '../../operations/session';

export function makeArchiveCommand(): Command {
  return new Command('archive')
    .arguments('<id>')
    .description('hide a session from default listings, kept in full (reversible with unarchive)')
    .option('--reason <text>', 'why (credentials in URLs are removed)')
    .addHelpText('after', '\nExample:\n  crux session archive build-42 --reason "superseded by build-43"')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, await archiveSession(ctx, parseLogicalSessionId(rawId), opts.reason), renderSession('archived'));
    });
}

export function makeUnarchiveCommand(): Command {
  return new Command('unarchive')
    .arguments('<id>')
    .description('make an archived session active again')
    .addHelpText('after', '\nExample:\n  crux session unarchive build-42')
    .action(async (rawId: string, _opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, await unarchiveSession(ctx, parseLogicalSessionId(rawId)), renderSession('unarchived'));
    });
}
