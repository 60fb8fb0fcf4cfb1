// `crux handoff keygen | trust | untrust`: an agent's own Ed25519 key, and the public keys trusted (or revoked) here.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderKeygen, renderTrusted, renderUntrusted } from '../../../output/handoff';
import { keygen, trustKey, untrustKey } from '../../../domain/handoff/key-ring';
import { agentOf, handoffScope as scopeOf } from '../../operations/scope';

export function makeKeygenCommand(): Command {
  return new Command('keygen')
    .description("create the agent's Ed25519 key (keys/, 0600) for --alg ed25519, trust it here, print the public key")
    .addHelpText('after', '\nExample:\n  crux handoff keygen --agent planner')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      const result = await keygen(scopeOf(ctx), agentOf(undefined, ctx, '--agent'));
      const { agent, public_key, key_id, created } = result.key;
      await emit(ctx, { agent, public_key, key_id, created, trusted: result.trusted }, () => renderKeygen(result));
    });
}

export function makeTrustCommand(): Command {
  return new Command('trust')
    .arguments('<public-key>')
    .description("trust an agent's Ed25519 public key (as `keygen` printed it) for packages it signs")
    .addHelpText('after', "\nExample:\n  crux handoff trust --agent planner \\\n    'ed25519:oFPD19R33y/DQ5n88Pyn/fPGSxbpPmvSov7H57/UNZo='")
    .action(async (publicKey: string, _opts, command: Command) => {
      const ctx = buildContext(command);
      const result = await trustKey(scopeOf(ctx), agentOf(undefined, ctx, '--agent'), publicKey);
      await emit(ctx, { trusted: result }, () => renderTrusted(result));
    });
}

export function makeUntrustCommand(): Command {
  return new Command('untrust')
    .arguments('[fingerprint]')
    .description('revoke a trusted Ed25519 key of the agent (by fingerprint or public key), or all of its keys; what they sign is refused (6)')
    .addHelpText(
      'after',
      '\nExamples:\n  crux handoff untrust 9f2c4e1a0b3d5c7e --agent planner\n  crux handoff untrust --agent planner     # every key of planner',
    )
    .action(async (fingerprint: string | undefined, _opts, command: Command) => {
      const ctx = buildContext(command);
      const result = await untrustKey(scopeOf(ctx), agentOf(undefined, ctx, '--agent'), fingerprint);
      await emit(ctx, { untrusted: result }, () => renderUntrusted(result));
    });
}
