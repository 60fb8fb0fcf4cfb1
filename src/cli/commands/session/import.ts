// `crux session import [file]`: JSON Lines of session records, written in one append or not at all.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { readImportInput, withImportProgress } from '../../import-progress';
import { emit, sentence } from '../../../output/emit';
import { renderImported } from '../../../output/session';
import { importSessions } from '../../../domain/session/store';
import { maxStateBytes, sessionScope as scopeOf } from '../../operations/scope';

const DEFAULT_MAX_IMPORT_BYTES = 256 * 1024 * 1024;

export function makeImportCommand(): Command {
  return new Command('import')
    .arguments('[file]')
    .description('read JSON Lines (a file, or - / nothing for stdin) and write them all in one append, or nothing')
    .addHelpText('after', '\nExample:\n  crux session import sessions.backup.jsonl')
    .action(async (file: string | undefined, _opts, command: Command) => {
      const ctx = buildContext(command);
      const input = readImportInput(ctx, file, DEFAULT_MAX_IMPORT_BYTES);
      const summary = await withImportProgress(ctx, file, (onLine) => importSessions(scopeOf(ctx), input, { maxStateBytes: maxStateBytes(ctx), onLine }));
      await emit(ctx, summary, sentence(renderImported));
    });
}
