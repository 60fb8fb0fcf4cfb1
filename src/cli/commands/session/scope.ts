// What every session command hands the store: the data directory, identities, clock and thresholds.
import type { Context } from '../../context';
import { envCount } from '../../parse';
import { thresholdsOf, type ThresholdFlags } from '../../thresholds';
import { DEFAULT_MAX_STATE_BYTES } from '../../../domain/session/state-document';
import type { SessionScope } from '../../../domain/session/store';

export const scopeOf = (ctx: Context, flags?: ThresholdFlags): SessionScope => ({
  dir: ctx.dataDir,
  agent: ctx.agent,
  actor: ctx.actor,
  now: ctx.now,
  thresholds: thresholdsOf(ctx.env, flags),
});

export const maxStateBytes = (ctx: Context) => envCount(ctx.env, 'CRUX_MAX_STATE_BYTES', DEFAULT_MAX_STATE_BYTES)!;
