// `crux case export`: every case as JSON Lines (--json: one {"cases": [...]} document).
import { Command } from 'commander';
import { buildContext } from '../../context';
import { withWarnings, writeJson } from '../../../output/emit';
import { listCases } from '../../../domain/case/store';
import { caseScope as scopeOf } from '../../operations/scope';

export function makeExportCommand(): Command {
  return new Command('export')
    .description('every case as JSON Lines, for backups and import (--json: one {"cases": [...]} document)')
    .addHelpText('after', '\nExample:\n  crux case export > cases.backup.jsonl')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      const lines = (await listCases(scopeOf(ctx))).map((c) => JSON.stringify(c));
      if (ctx.json) writeJson(`${withWarnings(`{"cases":[${lines.join(',')}]}`, ctx.warnings)}\n`);
      else writeJson(lines.map((line) => `${line}\n`).join(''));
    });
}
