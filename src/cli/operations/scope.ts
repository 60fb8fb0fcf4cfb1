// What every operation hands its domain store (data directory or PostgreSQL, identities, clock, thresholds),
// and the agent and durations a handoff acts with: built from a context, shared by every adapter.
import type { Context } from '../context';
import { envCount, parsePositiveDuration } from '../parse';
import { thresholdsOf, type ThresholdFlags } from '../thresholds';
import { usage } from '../../shared/errors';
import { parseAgentName, type AgentName } from '../../shared/ids';
import type { CaseScope } from '../../domain/case/store';
import type { HandoffScope } from '../../domain/handoff/store';
import { DEFAULT_MAX_STATE_BYTES } from '../../domain/session/state-document';
import type { SessionScope } from '../../domain/session/store';

export const sessionScope = (ctx: Context, flags?: ThresholdFlags): SessionScope => ({
  dir: ctx.dataDir,
  agent: ctx.agent,
  actor: ctx.actor,
  now: ctx.now,
  thresholds: thresholdsOf(ctx.env, flags),
});

export const maxStateBytes = (ctx: Context) => envCount(ctx.env, 'CRUX_MAX_STATE_BYTES', DEFAULT_MAX_STATE_BYTES)!;

export const caseScope = (ctx: Context): CaseScope => ({ dir: ctx.dataDir, now: ctx.now, actor: ctx.actor });

export const handoffScope = (ctx: Context): HandoffScope => ({ dir: ctx.dataDir, now: ctx.now, env: ctx.env, actor: ctx.actor });

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
