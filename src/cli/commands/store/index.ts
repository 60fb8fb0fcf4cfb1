// `crux store …`: the group and its commands. `crux store init [--print]`: create or migrate a PostgreSQL store's
// schema (or a data directory) ahead of time.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit, writeHuman } from '../../../output/emit';
import { renderInit } from '../../../output/store';
import { makeGroup } from '../group';

function makeInitCommand(): Command {
  return new Command('init')
    .description("create or migrate the store ahead of its first write: a PostgreSQL schema with every journal's table, or a data directory")
    .option('--print', 'show what it would do (on PostgreSQL, the SQL script) and change nothing')
    .addHelpText(
      'after',
      [
        '',
        'Idempotent: on a store that is ready it does nothing. The first write still',
        'creates what is missing.',
        '',
        'Examples:',
        "  crux --store 'postgres://dba@db.internal/agents?schema=crux' store init",
        '  # the SQL, to review or to run yourself:',
        "  crux --store 'postgres://dba@db.internal/agents' store init --print | psql …",
        '  crux --data-dir /srv/crux store init    # the directory (0700) and its lock',
      ].join('\n'),
    )
    .action(async (opts: { print?: boolean }, command: Command) => {
      const ctx = buildContext(command);
      const report = await ctx.dataDir.init({ print: opts.print === true });
      // The script is what --print exists to print: never suppressed by --quiet, never decorated.
      if (report.sql !== undefined && !ctx.json) writeHuman(report.sql, false);
      else await emit(ctx, report, renderInit);
    });
}

const COMMANDS = {
  init: makeInitCommand,
};

export function makeStoreCommand(wanted?: string): Command {
  return makeGroup('store', 'make a store ready ahead of its first write (a PostgreSQL schema, a data directory)', COMMANDS, wanted);
}
