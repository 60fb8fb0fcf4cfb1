// What every handoff command hands the store, and the agent it acts for.
import type { Context } from '../../context';
import { parsePositiveDuration } from '../../parse';
import { usage } from '../../../shared/errors';
import { parseAgentName, type AgentName } from '../../../shared/ids';
import type { HandoffScope } from '../../../domain/handoff/store';

export const scopeOf = (ctx: Context): HandoffScope => ({ dir: ctx.dataDir, now: ctx.now, env: ctx.env, actor: ctx.actor });

/** The agent named by `flag`, else --agent / CRUX_AGENT; one of them is required. */
export function agentOf(raw: string | undefined, ctx: Context, flag: string): AgentName {
  if (raw !== undefined) return parseAgentName(raw);
  if (ctx.agent !== undefined) return ctx.agent;
  const ways = flag === '--agent' ? '--agent or CRUX_AGENT' : `${flag}, --agent or CRUX_AGENT`;
  throw usage(`${flag} is required`, `name the agent with ${ways}`);
}

/** A duration option with its default. */
export const durationOr = (raw: string | undefined, fallback: number, flag: string): number =>
  raw === undefined ? fallback : parsePositiveDuration(raw, flag);
