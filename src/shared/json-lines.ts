// Reading JSON Lines for an import: every line validated before anything is written, a bad one named by its number.
import { isUtf8 } from 'node:buffer';
import { CruxError, invalid } from './errors';

export interface JsonLinesOptions {
  /** The hint of a line's error when the error has none of its own. */
  readonly hint?: string;
  /** Called after each line with the bytes read so far and the total (a progress display). */
  readonly onLine?: ((doneBytes: number, totalBytes: number) => void) | undefined;
}

/**
 * Parses each line with `parseLine` (blank lines are skipped; a trailing \r is ignored). The first line that is
 * not UTF-8 or that `parseLine` refuses refuses the whole input, its error prefixed with `line N: `.
 */
export function parseJsonLines<T>(input: Buffer, parseLine: (text: string) => T, opts: JsonLinesOptions = {}): { line: number; value: T }[] {
  const parsed: { line: number; value: T }[] = [];
  let line = 0;
  for (let start = 0; start < input.length; ) {
    let end = input.indexOf(10, start);
    if (end === -1) end = input.length;
    line += 1;
    const bytes = input.subarray(start, end);
    start = end + 1;
    try {
      if (!isUtf8(bytes)) throw invalid('not valid UTF-8');
      const text = bytes.toString('utf8').replace(/\r$/, '');
      if (text.trim() === '') continue;
      parsed.push({ line, value: parseLine(text) });
    } catch (error) {
      if (error instanceof CruxError) throw new CruxError(error.kind, `line ${line}: ${error.message}`, error.hint ?? opts.hint);
      throw error;
    }
    opts.onLine?.(Math.min(start, input.length), input.length);
  }
  return parsed;
}

/** JSON.parse with the refusal an import gives: exit 5, naming the parser's complaint. */
export function parseJsonText(text: string, hint?: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalid(`not valid JSON (${(error as Error).message})`, hint);
  }
}

/** Refuses the second line that names an id already named on an earlier line. */
export function refuseRepeatedIds<T>(lines: readonly { line: number; value: T }[], idOf: (value: T) => string, what: (id: string) => string): void {
  const firstLineOf = new Map<string, number>();
  for (const { line, value } of lines) {
    const id = idOf(value);
    const earlier = firstLineOf.get(id);
    if (earlier !== undefined) throw invalid(`line ${line}: ${what(id)} already appears on line ${earlier}`);
    firstLineOf.set(id, line);
  }
}
