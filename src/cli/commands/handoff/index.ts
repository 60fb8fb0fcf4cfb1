// `crux handoff …`: the group and its commands, one factory each (add a command: a factory, here or in a file of
// its own, and a line in COMMANDS).
import { Command } from 'commander';
import { makeGroup } from '../group';
import { buildContext } from '../../context';
import { emit, withWarnings, writeHuman, writeJson } from '../../../output/emit';
import { inspectJson, renderAccepted, renderInspect, renderKeygen, renderTrusted, renderUntrusted } from '../../../output/handoff';
import { loadStyle } from '../../../output/style';
import { parseAgentName } from '../../../shared/ids';
import { keygen, trustKey, untrustKey } from '../../../domain/handoff/key-ring';
import { exportHandoff } from '../../../domain/handoff/listing';
import { DEFAULT_MAX_AGE_MS, inspectHandoff } from '../../../domain/handoff/store';
import { accept } from '../../operations/handoff';
import { agentOf, durationOr, handoffScope as scopeOf } from '../../operations/scope';
import { checkOutPath, readPackage, writeEnvelope } from './envelope-io';
import { makeMintCommand } from './mint';
import { makeListCommand } from './list';

/** A package verified, then its session stored under the receiver, and its facts. */
const makeAcceptCommand = () =>
  new Command('accept')
    .arguments('[file]')
    .description('verify a package (file or - for stdin), then store its session under the receiver and its facts')
    .option('--as <agent>', 'the receiving agent (default: --agent)')
    .option('--max-age <duration>', 'how old a package without expires_at (a daemon package) may be (default 24h)')
    .addHelpText('after', '\nExample:\n  crux handoff accept pkg.json --as builder')
    .action(async (file: string | undefined, opts, command: Command) => {
      const ctx = buildContext(command);
      const receiver = agentOf(opts.as, ctx, '--as');
      const maxAgeMs = durationOr(opts.maxAge, DEFAULT_MAX_AGE_MS, '--max-age');
      const { document, result } = await accept(ctx, readPackage(file), { receiver, maxAgeMs });
      await emit(ctx, document, () => renderAccepted(result));
    });

const makeInspectCommand = () =>
  new Command('inspect')
    .arguments('[file]')
    .description('decode a package without trusting it; show every field and each check; change nothing (exit 6/7/8 when a check fails)')
    .option('--as <agent>', 'check the target against this receiver (default: --agent)')
    .option('--max-age <duration>', 'as for accept (default 24h)')
    .addHelpText('after', '\nExample:\n  crux handoff inspect pkg.json --as builder')
    .action(async (file: string | undefined, opts, command: Command) => {
      const ctx = buildContext(command);
      const receiver = opts.as !== undefined ? parseAgentName(opts.as) : ctx.agent;
      const maxAgeMs = durationOr(opts.maxAge, DEFAULT_MAX_AGE_MS, '--max-age');
      const result = await inspectHandoff(scopeOf(ctx), readPackage(file), { receiver, maxAgeMs });
      if (ctx.json) writeJson(`${withWarnings(inspectJson(result), ctx.warnings)}\n`);
      else if (!ctx.quiet) writeHuman(renderInspect(result, await loadStyle(ctx)), ctx.color);
      if (result.failure !== undefined) throw result.failure;
    });

/** The envelope of a package minted here, again. */
const makeExportCommand = () =>
  new Command('export')
    .arguments('<id>')
    .description('print again the envelope of a package minted here (by handoff id or content hash)')
    .option('--out <file>', 'write it to this file, as > does (a new file: mode 0600; - is stdout)')
    .addHelpText('after', '\nExample:\n  crux handoff export h_c427cb14420812e723ce3c77 --out pkg.json')
    .action(async (id: string, opts, command: Command) => {
      const ctx = buildContext(command);
      const out = checkOutPath(opts.out);
      writeEnvelope(ctx, (await exportHandoff(scopeOf(ctx), id)).envelope, out);
    });

// The agent's own Ed25519 key, and the public keys trusted (or revoked) here.
const makeKeygenCommand = () =>
  new Command('keygen')
    .description("create the agent's Ed25519 key (keys/, 0600) for --alg ed25519, trust it here, print the public key")
    .addHelpText('after', '\nExample:\n  crux handoff keygen --agent planner')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      const result = await keygen(scopeOf(ctx), agentOf(undefined, ctx, '--agent'));
      const { agent, public_key, key_id, created } = result.key;
      await emit(ctx, { agent, public_key, key_id, created, trusted: result.trusted }, () => renderKeygen(result));
    });

const makeTrustCommand = () =>
  new Command('trust')
    .arguments('<public-key>')
    .description("trust an agent's Ed25519 public key (as `keygen` printed it) for packages it signs")
    .addHelpText('after', "\nExample:\n  crux handoff trust --agent planner \\\n    'ed25519:oFPD19R33y/DQ5n88Pyn/fPGSxbpPmvSov7H57/UNZo='")
    .action(async (publicKey: string, _opts, command: Command) => {
      const ctx = buildContext(command);
      const result = await trustKey(scopeOf(ctx), agentOf(undefined, ctx, '--agent'), publicKey);
      await emit(ctx, { trusted: result }, () => renderTrusted(result));
    });

const makeUntrustCommand = () =>
  new Command('untrust')
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

const COMMANDS = {
  mint: makeMintCommand,
  accept: makeAcceptCommand,
  inspect: makeInspectCommand,
  list: makeListCommand,
  export: makeExportCommand,
  keygen: makeKeygenCommand,
  trust: makeTrustCommand,
  untrust: makeUntrustCommand,
};

export function makeHandoffCommand(wanted?: string): Command {
  return makeGroup('handoff', 'handoff packages: one agent mints a session, another accepts it (daemon-compatible)', COMMANDS, wanted);
}
