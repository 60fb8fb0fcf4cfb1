// `crux case …`: the group and its commands, one factory each (add a command: a factory, here or in a file of its
// own, and a line in COMMANDS).
import { Command } from 'commander';
import { makeGroup } from '../group';
import { buildContext } from '../../context';
import { readImportInput, withImportProgress } from '../../import-progress';
import { emit, withWarnings, writeJson } from '../../../output/emit';
import { renderCase, renderDeleted, renderImported } from '../../../output/case';
import { usage } from '../../../shared/errors';
import { newId, parseCaseId, type CaseId } from '../../../shared/ids';
import { randomBytes } from '../../../shared/random';
import { parseImportLines } from '../../../domain/case/import-lines';
import { deleteCase, importCases, listCases } from '../../../domain/case/store';
import { showCase } from '../../operations/case';
import { caseScope as scopeOf } from '../../operations/scope';
import { makeRecordCommand } from './record';
import { makeRetrieveCommand } from './retrieve';
import { makeListCommand } from './list';

const makeShowCommand = () =>
  new Command('show')
    .arguments('<id>')
    .description('one case, every field')
    .addHelpText('after', '\nExample:\n  crux case show c_5f0c2a9e1b7d4c3a2f1e0d9c')
    .action(async (rawId: string, _opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, await showCase(ctx, parseCaseId(rawId)), renderCase);
    });

const makeDeleteCommand = () =>
  new Command('delete')
    .arguments('<id>')
    .description('remove a case outright (irreversible; needs --yes)')
    .option('--yes', 'really delete')
    .addHelpText('after', '\nExample:\n  crux case delete c_5f0c2a9e1b7d4c3a2f1e0d9c --yes')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      if (opts.yes !== true) throw usage(`deleting case ${rawId} is irreversible: add --yes`);
      await emit(ctx, await deleteCase(scopeOf(ctx), parseCaseId(rawId)), renderDeleted);
    });

const makeExportCommand = () =>
  new Command('export')
    .description('every case as JSON Lines, for backups and import (--json: one {"cases": [...]} document)')
    .addHelpText('after', '\nExample:\n  crux case export > cases.backup.jsonl')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      const lines = (await listCases(scopeOf(ctx))).map((c) => JSON.stringify(c));
      if (ctx.json) writeJson(`${withWarnings(`{"cases":[${lines.join(',')}]}`, ctx.warnings)}\n`);
      else writeJson(lines.map((line) => `${line}\n`).join(''));
    });

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

/** Cases added from JSON Lines: one bad line refuses them all. */
const makeImportCommand = () =>
  new Command('import')
    .arguments('[file]')
    .description('add cases from JSON Lines (a file, or - / nothing for stdin); one bad line refuses them all')
    .addHelpText('after', '\nExample:\n  crux case import cases.backup.jsonl')
    .action(async (file: string | undefined, _opts, command: Command) => {
      const ctx = buildContext(command);
      const input = readImportInput(ctx, file, DEFAULT_MAX_IMPORT_BYTES);
      const summary = await withImportProgress(ctx, file, (onLine) => importCases(scopeOf(ctx), parseImportLines(input, caseIdSource(), ctx.now, onLine)));
      await emit(ctx, summary, renderImported);
    });

const COMMANDS = {
  record: makeRecordCommand,
  retrieve: makeRetrieveCommand,
  show: makeShowCommand,
  list: makeListCommand,
  delete: makeDeleteCommand,
  export: makeExportCommand,
  import: makeImportCommand,
};

export function makeCaseCommand(wanted?: string): Command {
  return makeGroup('case', 'cases: what an agent did and how it turned out (procedural memory)', COMMANDS, wanted);
}
