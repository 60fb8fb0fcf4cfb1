// A transcript's open stretch recorded as one case (SPEC §10.2): what a hook runs at SessionEnd and Stop. The
// stretch is chosen, drafted, validated and scrubbed (§7) under the lock, so each is recorded exactly once.
import type { Context } from '../context';
import { parseCaseDraft } from '../../domain/case/case';
import { hasHeldCase, recordOnce } from '../../domain/case/store';
import { turnsOf, type Turn } from '../../domain/transcript/turns';
import { stretchCase, stretchCaseId, stretchToRecord, type Ending, type StretchSource } from '../../domain/transcript/stretch';
import { caseScope } from './scope';

/** Whether the stretch that ends with the prompt of this key was recorded: a cheap look before reading a transcript. */
export const stretchRecorded = (ctx: Context, source: StretchSource, promptKey: string) =>
  hasHeldCase(caseScope(ctx), stretchCaseId(source, { key: promptKey }));

/** Records the turns after the last recorded stretch as one case (see stretchToRecord); `case` is null when there are none. */
export async function recordStretch(ctx: Context, all: readonly Turn[], ending: Ending, source: StretchSource, label: string) {
  const turns = turnsOf(all, source.sessionId);
  const candidates = turns.map((turn) => stretchCaseId(source, turn));
  const recorded = await recordOnce(caseScope(ctx), candidates, (held) => {
    const made = stretchCase(stretchToRecord(turns, source, ending, held), ending, source, label);
    return made === undefined ? undefined : { caseId: made.caseId, draft: parseCaseDraft(made.fields) };
  });
  return { case: recorded ?? null };
}
