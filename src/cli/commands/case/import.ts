// `crux case import [file]`: add cases from JSON Lines; one bad line refuses them all.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { readImportInput, withImportProgress } from '../../import-progress';
import { emit } from '../../../output/emit';
import { renderImported } from '../../../output/case';
import { newId, type CaseId } from '../../../shared/ids';
import { randomBytes } from '../../../shared/random';
import { parseImportLines } from '../../../domain/case/import-lines';
import { importCases } from '../../../domain/case/store';
import { caseScope as scopeOf } from '../../operations/scope';

const DEFAULT_MAX_IMPORT_BYTES = 1024 * 1024 * 1024;

// Ids drawn from the random source a thousand at a time: importing 100k cases makes 100 reads, not 100k.
function caseIdSource(): () => CaseId {
  let pool: Buffer = Buffer.alloc(0);
  let next = 0;
  return () => {
    if (next === pool.length) [pool, next] = [randomBytes(12 * 1000), 0];
    return newId<CaseId>('c', pool.subarray(next, (next += 12)));
  };
}

export function makeImportCommand(): Command {
  return new Command('import')
    .arguments('[file]')
    .description('add cases from JSON Lines (a file, or - / nothing for stdin); one bad line refuses them all')
    .addHelpText('after', '\nExample:\n  crux case import cases.backup.jsonl')
    .action(async (file: string | undefined, _opts, command: Command) => {
      const ctx = buildContext(command);
      const input = readImportInput(ctx, file, DEFAULT_MAX_IMPORT_BYTES);
      const summary = await withImportProgress(ctx, file, (onLine) => importCases(scopeOf(ctx), parseImportLines(input, caseIdSource(), ctx.now, onLine)));
      await emit(ctx, summary, renderImported);
    });
}
