// A coding agent's lifecycle hook (SPEC §10.2): one payload from stdin mapped onto the sessions and cases of the
// hook's agent, through the operations every adapter runs. The answer, if any, is the stdout the agent reads.
import type { Context } from '../context';
import { closeSession, touchSession } from '../operations/session';
import { CruxError, invalid } from '../../shared/errors';
import { parseLogicalSessionId, type AgentName, type LogicalSessionId } from '../../shared/ids';
import type { ScoredCase } from '../../domain/case/store';
import type { Ending } from '../../domain/transcript/stretch';
import type { HookClient, HookEffect } from './clients';
import { projectOf } from '../project-root';
// The case store, the transcript reader and the recorder load only for the events that use them: a touch
// stays as cheap as a put.

export interface HookOptions {
  readonly ttlMs: number;
  readonly topK: number;
  readonly minSimilarity: number;
  /** SessionEnd and a turn's end (client.turnEnd) record the transcript's open stretch as a case. */
  readonly recordCases: boolean;
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

/**
 * Creates the session from the payload when it is missing (hooks installed mid-session see no SessionStart),
 * else moves its updated_at; a closed session is left as it is (a touch on it is the machine's no-op).
 */
function touch(ctx: Context, payload: Payload, project: string | null, opts: HookOptions) {
  const { fields } = payload;
  const state = JSON.stringify({ cwd: text(fields.cwd), transcript_path: text(fields.transcript_path), source: text(fields.source), project });
  return touchSession(ctx, payload.sessionId, { state, ttlMs: opts.ttlMs });
}

const numbered = (results: readonly ScoredCase[]) =>
  results
    .map(
      ({ similarity, case: c }, i) =>
        `${i + 1}. task: ${c.task}\n   action: ${c.action}\n   outcome: ${c.outcome}\n   (similarity ${similarity.toFixed(2)}, case ${c.case_id})`,
    )
    .join('\n');

/** The context the agent adds to the prompt: the successful cases most like it, best first. */
const promptContext = (results: readonly ScoredCase[]): string => `crux: cases that worked before for similar tasks\n${numbered(results)}`;

/** What SessionStart tells the model: which crux session this is and how to reach it, and what worked before. */
function startContext(
  client: HookClient,
  session: { id: LogicalSessionId; agent: AgentName; closed: boolean },
  project: string | null,
  results: readonly ScoredCase[],
): string {
  const where = project === null ? '' : ` (project ${project})`;
  const id = JSON.stringify(session.id);
  const lines = [
    `crux: this ${client.label} session is crux session ${id} of agent ${JSON.stringify(session.agent)}${where}.`,
    session.closed
      ? `It was closed when it ended before; its crux MCP tools still read it (session_get with session_id ${id}), but session_put is refused; case_retrieve finds what worked before.`
      : `Its crux MCP tools reach it: call session_get with session_id ${id} to read its state, session_put to save it, case_retrieve for what worked before.`,
  ];
  if (results.length > 0) lines.push(`crux: cases that worked before in project ${project}, similar to what this session resumes\n${numbered(results)}`);
  return lines.join('\n');
}

const answer = (event: string, additionalContext: string) => JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext } });

/** The successful cases of `project` most similar to what a resumed or compacted session was doing. */
async function resumedCases(ctx: Context, payload: Payload, project: string | null, opts: HookOptions): Promise<readonly ScoredCase[]> {
  const source = text(payload.fields.source);
  const transcript = text(payload.fields.transcript_path);
  // A new or cleared session has nothing to resume.
  if (project === null || transcript === null || (source !== 'resume' && source !== 'compact')) return [];
  const { lastPromptOf } = await import('./transcript-file');
  const prompt = lastPromptOf(transcript);
  if (prompt === undefined) return [];
  const { retrieveTagged } = await import('../operations/case');
  return (await retrieveTagged(ctx, { text: prompt.text, topK: opts.topK, onlySuccess: true, minSimilarity: opts.minSimilarity }, project)).results;
}

/** Records the open stretch of the payload's transcript, when the hook records cases and the client can. */
async function record(client: HookClient, ctx: Context, payload: Payload, project: string | null, ending: Ending) {
  const { recordFromTranscript } = await import('./recording');
  await recordFromTranscript(client, ctx, {
    sessionId: payload.sessionId,
    agent: ctx.agent!,
    transcriptPath: text(payload.fields.transcript_path),
    cwd: text(payload.fields.cwd),
    project,
    ending,
  });
}

/**
 * Applies one payload; answers the text for stdout, else undefined. `ctx.agent` is the hook's agent (the
 * command fills in the client's own name), so every operation scopes to it.
 */
export async function runHook(client: HookClient, ctx: Context, input: Buffer, opts: HookOptions): Promise<string | undefined> {
  const payload = parsePayload(client, input);
  if (payload === undefined) return undefined;
  const project = projectOf(text(payload.fields.cwd));
  switch (payload.effect) {
    case 'end': {
      const reason = text(payload.fields.reason) ?? 'unknown';
      const completed = client.completedReasons.includes(reason);
      if (opts.recordCases && client.turnEnd === undefined) ctx.warn(`no case recorded: crux does not read ${client.label} transcripts`);
      else if (opts.recordCases) await record(client, ctx, payload, project, { kind: 'session', reason, completed });
      try {
        await closeSession(ctx, payload.sessionId, {
          outcome: completed ? 'completed' : 'abandoned',
          summary: `${client.label} session ended (reason: ${reason})`,
        });
      } catch (error) {
        // Nothing to close: the session began before the hooks were installed (or was deleted).
        if (!(error instanceof CruxError && error.kind === 'not_found')) throw error;
      }
      return undefined;
    }
    case 'prompt': {
      await touch(ctx, payload, project, opts);
      const prompt = text(payload.fields.prompt) ?? '';
      const { retrieve } = await import('../operations/case');
      const { results } = await retrieve(ctx, { text: prompt, topK: opts.topK, onlySuccess: true, minSimilarity: opts.minSimilarity }, false);
      return results.length === 0 ? undefined : answer(payload.event, promptContext(results));
    }
    case 'start': {
      const { outcome } = await touch(ctx, payload, project, opts);
      const results = await resumedCases(ctx, payload, project, opts);
      return answer(payload.event, startContext(client, { id: payload.sessionId, agent: ctx.agent!, closed: outcome === 'closed' }, project, results));
    }
    case 'touch':
      await touch(ctx, payload, project, opts);
      if (opts.recordCases && payload.event === client.turnEnd) await record(client, ctx, payload, project, { kind: 'turn' });
      return undefined;
  }
}
