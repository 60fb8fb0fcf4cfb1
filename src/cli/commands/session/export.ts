// `crux session export`: every session record, state included, as JSON Lines (an agent: only its own).
import { Command } from 'commander';
import { buildContext } from '../../context';
import { withWarnings, writeJson } from '../../../output/emit';
import { exportSessions } from '../../../domain/session/store';
import { sessionScope as scopeOf } from '../../operations/scope';

export function makeExportCommand(): Command {
  return new Command('export')
    .description('every session record, state included, as JSON Lines (an agent: only its own)')
    .option('--all-agents', "every agent's sessions even when an agent identity is set")
    .addHelpText('after', '\nExample:\n  crux session export > sessions.backup.jsonl')
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const lines = await exportSessions(scopeOf(ctx), { allAgents: opts.allAgents === true });
      if (ctx.json) writeJson(`${withWarnings(`{"sessions":[${lines.map((l) => l.slice(0, -1)).join(',')}]}`, ctx.warnings)}\n`);
      else writeJson(lines.join('')); // what export exists to print, --quiet or not
    });
}
