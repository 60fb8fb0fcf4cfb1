// Handoff operations as every adapter runs them (CLI, MCP): mint answers with the envelope, which is itself the
// `--json` document; accept with `{accepted}`; list with `{handoffs, keys}` (SPEC §8).
import type { Context } from '../context';
import { handoffScope, maxStateBytes } from './scope';
import type { AgentName } from '../../shared/ids';
import { nameCommit } from '../../shared/commit-log';
import { encodeEnvelope } from '../../domain/handoff/envelope';
import { acceptHandoff, mintHandoff, type MintCommand } from '../../domain/handoff/store';
import { listHandoffs as list, type HandoffRow, type HandoffStatus } from '../../domain/handoff/listing';
import { HANDOFF_ORDERS, windowOf, type SortSpec } from '../../domain/list-window';

export const HANDOFF_STATUSES = ['outstanding', 'accepted', 'expired'] as const satisfies readonly HandoffStatus[];

/** Mints, records and hands off; `text` is the envelope as the CLI prints it (and the daemon's tool returns it). */
export async function mint(ctx: Context, cmd: MintCommand) {
  const result = await mintHandoff(handoffScope(ctx), cmd);
  nameCommit(`minted handoff ${cmd.handoffId}`);
  if (result.daemonIncompatible !== undefined) ctx.warn(result.daemonIncompatible);
  return { ...result, text: encodeEnvelope(result.envelope) };
}

export async function accept(ctx: Context, input: Uint8Array, cmd: { receiver: AgentName; maxAgeMs: number }) {
  const result = await acceptHandoff(handoffScope(ctx), input, { ...cmd, maxStateBytes: maxStateBytes(ctx) });
  return { document: { accepted: result.accepted }, result };
}

export interface HandoffFilter {
  readonly statuses?: readonly string[] | undefined;
  readonly from?: AgentName | undefined;
  readonly to?: AgentName | undefined;
}

type HandoffWindow = { sort?: SortSpec<keyof typeof HANDOFF_ORDERS> | undefined; limit?: number | undefined };

/** `handoff list`: the packages minted and accepted here, newest first, filtered, sorted and cut; and the keyring. */
export async function listHandoffs(ctx: Context, filter: HandoffFilter, window: HandoffWindow = {}) {
  return (await countedHandoffs(ctx, filter, window)).document;
}

/** As listHandoffs, with how many packages matched, shown or not (a list cut short says how many more there are). */
export async function countedHandoffs(ctx: Context, filter: HandoffFilter, window: HandoffWindow = {}) {
  const { statuses, from, to } = filter;
  const where = (r: HandoffRow) =>
    (statuses === undefined || statuses.includes(r.status)) && (from === undefined || r.source_agent === from) && (to === undefined || r.target_agent === to);
  const { handoffs, keys } = await list(handoffScope(ctx));
  // Newest first: the reverse of the order written (ties of --sort keep it too).
  const { rows, total } = windowOf(handoffs.toReversed(), HANDOFF_ORDERS, { ...window, where });
  return { document: { handoffs: rows, keys }, total };
}
