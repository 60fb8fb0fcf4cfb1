// `crux session machine`: the session state machine as data.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderMachine } from '../../../output/session';
import { describeMachine } from '../../../domain/session/machine';

export function makeMachineCommand(): Command {
  return new Command('machine')
    .description('the session state machine as data: states, transitions, the terminal state')
    .addHelpText('after', '\nExample:\n  crux session machine --json')
    .action(async (_opts, command: Command) => {
      await emit(buildContext(command), describeMachine(), renderMachine);
    });
}
