// `--record-cases` (SPEC §10.2): the transcript a hook payload names, read and folded here, its open stretch
// recorded as one case through the operations.
import type { Context } from '../context';
import { recordStretch, stretchRecorded } from '../operations/stretch';
import { scopeSessionId, type AgentName, type LogicalSessionId } from '../../shared/ids';
import type { Ending } from '../../domain/transcript/stretch';
import type { HookClient } from './clients';
import { foldTranscript, lastPromptsOf, maxTranscriptBytes } from './transcript-file';

export interface RecordRequest {
  readonly sessionId: LogicalSessionId;
  readonly agent: AgentName;
  readonly transcriptPath: string | null;
  readonly cwd: string | null;
  readonly project: string | null;
  readonly ending: Ending;
}

/**
 * Records the transcript's open stretch, if any. A transcript that cannot be read whole (missing, torn,
 * oversized, not JSON) records nothing and says why in one stderr line; the hook still succeeds.
 */
export async function recordFromTranscript(client: HookClient, ctx: Context, req: RecordRequest): Promise<void> {
  if (req.transcriptPath === null) {
    ctx.warn(`no case recorded: the ${client.label} payload names no transcript_path`);
    return;
  }
  const source = { client: client.name, sessionKey: scopeSessionId(req.agent, req.sessionId), sessionId: req.sessionId, cwd: req.cwd, project: req.project };
  // At a turn's end the last turn stays open, and what a newer prompt closed was usually recorded at the turn's
  // end before: the transcript's last two prompts and one look-up by key tell, before the whole file is read.
  if (req.ending.kind === 'turn') {
    const tail = lastPromptsOf(req.transcriptPath, 2);
    if (tail !== undefined && tail.prompts.length < 2 && tail.whole) return;
    const closed = tail?.prompts[1];
    if (closed?.uuid != null && (await stretchRecorded(ctx, source, closed.uuid))) return;
  }
  const read = foldTranscript(req.transcriptPath, maxTranscriptBytes(ctx.env));
  if ('refused' in read) {
    ctx.warn(`no case recorded: ${read.refused}`);
    return;
  }
  await recordStretch(ctx, read.fold.turns, req.ending, source, client.label);
}
