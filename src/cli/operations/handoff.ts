// Handoff operations as every adapter runs them (CLI, MCP): mint answers with the envelope, which is itself the
// `--json` document; accept with `{accepted}` (SPEC §8).
import type { Context } from '../context';
import { handoffScope, maxStateBytes } from './scope';
import type { AgentName } from '../../shared/ids';
import { encodeEnvelope } from '../../domain/handoff/envelope';
import { acceptHandoff, mintHandoff, type MintCommand } from '../../domain/handoff/store';

/** Mints, records and hands off; `text` is the envelope as the CLI prints it (and the daemon's tool returns it). */
export async function mint(ctx: Context, cmd: MintCommand) {
  const result = await mintHandoff(handoffScope(ctx), cmd);
  if (result.daemonIncompatible !== undefined) ctx.warn(result.daemonIncompatible);
  return { ...result, text: encodeEnvelope(result.envelope) };
}

export async function accept(ctx: Context, input: Uint8Array, cmd: { receiver: AgentName; maxAgeMs: number }) {
  const result = await acceptHandoff(handoffScope(ctx), input, { ...cmd, maxStateBytes: maxStateBytes(ctx) });
  return { document: { accepted: result.accepted }, result };
}
