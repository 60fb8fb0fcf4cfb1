// Claude Code's lifecycle hooks (SPEC §10.2): one payload from stdin mapped onto the sessions and cases of the
// hook's agent. Each event is one transaction; the answer, if any, is the stdout Claude Code reads.
import type { Context } from '../context';
import { scopeOf } from '../commands/session/scope';
import { CruxError, invalid } from '../../shared/errors';
import { parseAgentName, parseLogicalSessionId, type AgentName, type LogicalSessionId } from '../../shared/ids';
import { closeSession, touchSession, type SessionScope } from '../../domain/session/store';
import type { ScoredCase } from '../../domain/case/store';
// The case store loads only for UserPromptSubmit: every other event is a session touch, as cheap as a put.

export const DEFAULT_AGENT = 'claude-code';

/** The events crux acts on, in the order a session meets them; any other event is passed over (exit 0). */
export const CLAUDE_CODE_EVENTS = ['SessionStart', 'UserPromptSubmit', 'Stop', 'SubagentStop', 'PreCompact', 'Notification', 'SessionEnd'] as const;
type HookEvent = (typeof CLAUDE_CODE_EVENTS)[number];

/** SessionEnd reasons that mean the user ended the session on purpose; any other reason is `abandoned`. */
const COMPLETED_REASONS = ['clear', 'logout', 'prompt_input_exit'];

export interface HookOptions {
  readonly ttlMs: number;
  readonly topK: number;
  readonly minSimilarity: number;
}

interface Payload {
  readonly event: HookEvent;
  readonly sessionId: LogicalSessionId;
  readonly fields: Record<string, unknown>;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The payload, checked: a JSON object naming its event; for the events crux acts on, a valid session_id. */
function parsePayload(input: Buffer): Payload | undefined {
  let value: unknown;
  try {
    value = JSON.parse(input.toString('utf8'));
  } catch (error) {
    // JSON.parse's message quotes the input, and a prompt may hold a secret: only the position is told.
    const at = /position (\d+)/.exec((error as Error).message);
    throw invalid(`the hook payload is not valid JSON${at ? ` (at byte ${at[1]})` : ''}`, 'Claude Code writes one JSON object on standard input');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('the hook payload is not a JSON object');
  const fields = value as Record<string, unknown>;
  if (typeof fields.hook_event_name !== 'string') throw invalid('the hook payload has no hook_event_name');
  if (!(CLAUDE_CODE_EVENTS as readonly string[]).includes(fields.hook_event_name)) return undefined;
  if (typeof fields.session_id !== 'string') throw invalid(`the ${fields.hook_event_name} payload has no session_id`);
  return { event: fields.hook_event_name as HookEvent, sessionId: parseLogicalSessionId(fields.session_id), fields };
}

/** The agent the hook acts for: --agent / CRUX_AGENT, else claude-code. */
export const hookAgent = (ctx: Context): AgentName => ctx.agent ?? parseAgentName(DEFAULT_AGENT);

/**
 * Creates the session from the payload when it is missing (a hook installed mid-session sees no SessionStart),
 * else moves its updated_at; a closed session is left as it is (a touch on it is the machine's no-op).
 */
function touch(scope: SessionScope, payload: Payload, opts: HookOptions) {
  const { fields } = payload;
  const state = JSON.stringify({ cwd: text(fields.cwd), transcript_path: text(fields.transcript_path), source: text(fields.source) });
  return touchSession(scope, payload.sessionId, { state, ttlMs: opts.ttlMs });
}

/** The context Claude Code adds to the prompt: the successful cases most like it, best first. */
export function promptContext(results: readonly ScoredCase[]): string {
  const lines = results.map(({ similarity, case: c }, i) =>
    `${i + 1}. task: ${c.task}\n   action: ${c.action}\n   outcome: ${c.outcome}\n   (similarity ${similarity.toFixed(2)}, case ${c.case_id})`,
  );
  return `crux: cases that worked before for similar tasks\n${lines.join('\n')}`;
}

/** Applies one payload; answers the text for stdout (UserPromptSubmit with similar cases), else undefined. */
export async function runClaudeCodeHook(ctx: Context, input: Buffer, opts: HookOptions): Promise<string | undefined> {
  const payload = parsePayload(input);
  if (payload === undefined) return undefined;
  const scope: SessionScope = { ...scopeOf(ctx), agent: hookAgent(ctx) };
  switch (payload.event) {
    case 'SessionEnd': {
      const reason = text(payload.fields.reason) ?? 'unknown';
      const outcome = COMPLETED_REASONS.includes(reason) ? 'completed' : 'abandoned';
      try {
        await closeSession(scope, payload.sessionId, { outcome, summary: `Claude Code session ended (reason: ${reason})` });
      } catch (error) {
        // Nothing to close: the session began before the hooks were installed (or was deleted).
        if (!(error instanceof CruxError && error.kind === 'not_found')) throw error;
      }
      return undefined;
    }
    case 'UserPromptSubmit': {
      await touch(scope, payload, opts);
      const prompt = text(payload.fields.prompt) ?? '';
      const { retrieve } = await import('../operations/case');
      const { results } = await retrieve(ctx, { text: prompt, topK: opts.topK, onlySuccess: true, minSimilarity: opts.minSimilarity }, false);
      if (results.length === 0) return undefined;
      return JSON.stringify({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: promptContext(results) } });
    }
    case 'SessionStart':
    case 'Stop':
    case 'SubagentStop':
    case 'PreCompact':
    case 'Notification':
      await touch(scope, payload, opts);
      return undefined;
  }
}
