// Reading an import: JSON Lines of case objects, all validated before anything is written.
import type { CaseId } from '../../shared/ids';
import { parseJsonLines, parseJsonText, refuseRepeatedIds } from '../../shared/json-lines';
import type { Instant } from '../../shared/time';
import { parseImportObject, type Case } from './case';

/**
 * Parses every line (blank lines are allowed and skipped; a trailing \r is ignored). The first bad line
 * refuses the whole import, naming its 1-based line number; so does a case_id given twice.
 * `onLine` hears the bytes read so far and the total after each case (a progress display).
 */
export function parseImportLines(input: Buffer, newCaseId: () => CaseId, now: Instant, onLine?: (doneBytes: number, totalBytes: number) => void): Case[] {
  const hint = 'one case object per line';
  const lines = parseJsonLines(input, (text) => parseImportObject(parseJsonText(text, hint), newCaseId, now), { onLine });
  refuseRepeatedIds(
    lines,
    (c) => c.case_id,
    (id) => `case_id ${JSON.stringify(id)}`,
  );
  return lines.map((l) => l.value);
}
