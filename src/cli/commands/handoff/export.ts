// `crux handoff export <id>`: the envelope of a package minted here, again.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { exportHandoff } from '../../../domain/handoff/listing';
import { checkOutPath, writeEnvelope } from './envelope-io';
import { handoffScope as scopeOf } from '../../operations/scope';

export function makeExportCommand(): Command {
  return new Command('export')
    .arguments('<id>')
    .description('print again the envelope of a package minted here (by handoff id or content hash)')
    .option('--out <file>', 'write it to this file, as > does (a new file: mode 0600; - is stdout)')
    .addHelpText('after', '\nExample:\n  crux handoff export h_c427cb14420812e723ce3c77 --out pkg.json')
    .action(async (id: string, opts, command: Command) => {
      const ctx = buildContext(command);
      const out = checkOutPath(opts.out);
      writeEnvelope(ctx, (await exportHandoff(scopeOf(ctx), id)).envelope, out);
    });
}
