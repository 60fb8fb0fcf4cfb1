// A coding agent's lifecycle hook (SPEC §10.2): one payload from stdin mapped onto the sessions and cases of the
// hook's agent. Each event is one transaction; the answer, if any, is the stdout the agent reads.
import type { Context } from '../context';
import { sessionScope as scopeOf } from '../operations/scope';
import { CruxError, invalid } from '../../shared/errors';
import { parseAgentName, parseLogicalSessionId, type AgentName, type LogicalSessionId } from '../../shared/ids';
import { closeSession, touchSession, type SessionScope } from '../../domain/session/store';
import type { ScoredCase } from '../../domain/case/store';
import type { HookClient, HookEffect } from './clients';
// The case store loads only for a prompt event: every other event is a session touch, as cheap as a put.

export interface HookOptions {
  readonly ttlMs: number;
  readonly topK: number;
  readonly minSimilarity: number;
}

interface Payload {
  readonly event: string;
  readonly effect: HookEffect;
  readonly sessionId: LogicalSessionId;
  readonly fields: Record<string, unknown>;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The payload, checked: a JSON object naming its event; for the events crux acts on, a valid session_id. */
function parsePayload(client: HookClient, input: Buffer): Payload | undefined {
  let value: unknown;
  try {
    value = JSON.parse(input.toString('utf8'));
  } catch (error) {
    // JSON.parse's message quotes the input, and a prompt may hold a secret: only the position is told.
    const at = /position (\d+)/.exec((error as Error).message);
    throw invalid(`the hook payload is not valid JSON${at ? ` (at byte ${at[1]})` : ''}`, `${client.label} writes one JSON object on standard input`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('the hook payload is not a JSON object');
  const fields = value as Record<string, unknown>;
  const event = fields.hook_event_name;
  if (typeof event !== 'string') throw invalid('the hook payload has no hook_event_name');
  if (!Object.hasOwn(client.events, event)) return undefined;
  if (typeof fields.session_id !== 'string') throw invalid(`the ${event} payload has no session_id`);
  return { event, effect: client.events[event]!, sessionId: parseLogicalSessionId(fields.session_id), fields };
}

/** The agent the hook acts for: --agent / CRUX_AGENT, else the client's own name. */
export const hookAgent = (client: HookClient, ctx: Context): AgentName => ctx.agent ?? parseAgentName(client.defaultAgent);

/**
 * Creates the session from the payload when it is missing (hooks installed mid-session see no SessionStart),
 * else moves its updated_at; a closed session is left as it is (a touch on it is the machine's no-op).
 */
function touch(scope: SessionScope, payload: Payload, opts: HookOptions) {
  const { fields } = payload;
  const state = JSON.stringify({ cwd: text(fields.cwd), transcript_path: text(fields.transcript_path), source: text(fields.source) });
  return touchSession(scope, payload.sessionId, { state, ttlMs: opts.ttlMs });
}

/** The context the agent adds to the prompt: the successful cases most like it, best first. */
export function promptContext(results: readonly ScoredCase[]): string {
  const lines = results.map(({ similarity, case: c }, i) =>
    `${i + 1}. task: ${c.task}\n   action: ${c.action}\n   outcome: ${c.outcome}\n   (similarity ${similarity.toFixed(2)}, case ${c.case_id})`,
  );
  return `crux: cases that worked before for similar tasks\n${lines.join('\n')}`;
}

/** Applies one payload; answers the text for stdout (a prompt event with similar cases), else undefined. */
export async function runHook(client: HookClient, ctx: Context, input: Buffer, opts: HookOptions): Promise<string | undefined> {
  const payload = parsePayload(client, input);
  if (payload === undefined) return undefined;
  const scope: SessionScope = { ...scopeOf(ctx), agent: hookAgent(client, ctx) };
  switch (payload.effect) {
    case 'end': {
      const reason = text(payload.fields.reason) ?? 'unknown';
      const outcome = client.completedReasons.includes(reason) ? 'completed' : 'abandoned';
      try {
        await closeSession(scope, payload.sessionId, { outcome, summary: `${client.label} session ended (reason: ${reason})` });
      } catch (error) {
        // Nothing to close: the session began before the hooks were installed (or was deleted).
        if (!(error instanceof CruxError && error.kind === 'not_found')) throw error;
      }
      return undefined;
    }
    case 'prompt': {
      await touch(scope, payload, opts);
      const prompt = text(payload.fields.prompt) ?? '';
      const { retrieve } = await import('../operations/case');
      const { results } = await retrieve(ctx, { text: prompt, topK: opts.topK, onlySuccess: true, minSimilarity: opts.minSimilarity }, false);
      if (results.length === 0) return undefined;
      return JSON.stringify({ hookSpecificOutput: { hookEventName: payload.event, additionalContext: promptContext(results) } });
    }
    case 'start':
    case 'touch':
      await touch(scope, payload, opts);
      return undefined;
  }
}
