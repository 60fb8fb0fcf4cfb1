// Reading an import: JSON Lines of case objects, all validated before anything is written.
import { isUtf8 } from 'node:buffer';
import { CruxError, invalid } from '../../shared/errors';
import type { CaseId } from '../../shared/ids';
import type { Instant } from '../../shared/time';
import { parseImportObject, type Case } from './case';

/**
 * Parses every line (blank lines are allowed and skipped; a trailing \r is ignored). The first bad line
 * refuses the whole import, naming its 1-based line number; so does a case_id given twice.
 * `onLine` hears the bytes read so far and the total after each case (a progress display).
 */
export function parseImportLines(
  input: Buffer,
  newCaseId: () => CaseId,
  now: Instant,
  onLine?: (doneBytes: number, totalBytes: number) => void,
): Case[] {
  const cases: Case[] = [];
  const firstLineOf = new Map<string, number>();
  let line = 0;
  for (let start = 0; start < input.length; ) {
    let end = input.indexOf(10, start);
    if (end === -1) end = input.length;
    line += 1;
    const bytes = input.subarray(start, end);
    start = end + 1;
    if (!isUtf8(bytes)) throw invalid(`line ${line}: not valid UTF-8`);
    const text = bytes.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw invalid(`line ${line}: not valid JSON (${(error as Error).message})`, 'one case object per line');
    }
    let parsed: Case;
    try {
      parsed = parseImportObject(value, newCaseId, now);
    } catch (error) {
      if (error instanceof CruxError) throw new CruxError(error.kind, `line ${line}: ${error.message}`, error.hint);
      throw error;
    }
    const earlier = firstLineOf.get(parsed.case_id);
    if (earlier !== undefined) throw invalid(`line ${line}: case_id ${JSON.stringify(parsed.case_id)} already appears on line ${earlier}`);
    firstLineOf.set(parsed.case_id, line);
    cases.push(parsed);
    onLine?.(Math.min(start, input.length), input.length);
  }
  return cases;
}
