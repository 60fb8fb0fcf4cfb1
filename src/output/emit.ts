// Printing a result: one JSON document with --json (with the damage its replay passed over); with --quiet only
// the ids of a list or of what a command created; else the human rendering, streamed line by line and never
// with a raw control character.
import type { Style } from './style';
import { writeStdout } from './stdout';
import { CONTROLS_BUT_LAYOUT, jsonForTerminal, printable, visible } from '../shared/printable';
import { stdoutIsTerminal } from './terminal';

/** A damaged journal line a replay passed over: what a person sees on stderr, a script sees in the document. */
export interface JournalWarning {
  readonly file: string;
  readonly line: number;
  readonly reason: string;
}

export interface OutputMode {
  readonly json: boolean;
  readonly quiet: boolean;
  readonly color: boolean;
  /** The time relative times are measured from (--now). */
  readonly now?: number;
  readonly env?: NodeJS.ProcessEnv;
  /** Damage reported while this command read its journals. */
  readonly warnings?: readonly JournalWarning[];
  /** A table's header line (`--no-headers`: false). */
  readonly headers?: boolean | undefined;
}

/** A rendering: one text, or lines (without newlines) written as they are made. */
export type Rendering = string | Iterable<string>;
export type Renderer<T> = (result: T, style: Style) => Rendering;

/** A rendering as one text (lines joined), for a caller that is not a stream (an MCP tool's text content). */
export const textOf = (rendering: Rendering): string => (typeof rendering === 'string' ? rendering : [...rendering].join('\n'));

/** A serialized JSON object with `"warnings"` added when there are any. */
export function withWarnings(json: string, warnings: readonly JournalWarning[] | undefined): string {
  if (warnings === undefined || warnings.length === 0 || !json.endsWith('}')) return json;
  const members = JSON.stringify({ warnings });
  return json === '{}' ? members : `${json.slice(0, -1)},${members.slice(1)}`;
}

/**
 * Prints `result`. `quietIds` are what --quiet prints, one a line (as `docker ps -q`): a list's ids, the id of
 * what a command created; without it --quiet prints nothing.
 */
export async function emit<T>(mode: OutputMode, result: T, render: Renderer<T>, quietIds?: (result: T) => Iterable<string>): Promise<void> {
  if (mode.json) {
    writeJson(`${withWarnings(JSON.stringify(result), mode.warnings)}\n`);
    return;
  }
  if (mode.quiet) {
    if (quietIds !== undefined) writeHuman(idLines(quietIds(result)), false);
    return;
  }
  // A renderer that takes no style (a sentence) does not pay for loading chalk.
  const style = render.length >= 2 ? await (await import('./style')).loadStyle(mode) : (undefined as unknown as Style);
  writeHuman(render(result, style), mode.color);
}

function* idLines(ids: Iterable<string>): Generator<string> {
  for (const id of ids) yield printable(id);
}

const CHUNK = 1 << 16;

/** Writes a rendering, each line ended by a newline, in chunks of about 64 KiB. */
export function writeHuman(rendering: Rendering, color: boolean): void {
  if (typeof rendering === 'string') {
    if (rendering !== '') writeStdout(terminalSafe(rendering.endsWith('\n') ? rendering : `${rendering}\n`, color));
    return;
  }
  let buffer = '';
  for (const line of rendering) {
    buffer += `${line}\n`;
    if (buffer.length >= CHUNK) {
      writeStdout(terminalSafe(buffer, color));
      buffer = '';
    }
  }
  if (buffer !== '') writeStdout(terminalSafe(buffer, color));
}

// The last guard: renderers escape what they show (shared/printable.ts); anything that still slipped through
// is escaped here. Newlines and tabs are layout; with colour on, the SGR sequences chalk writes are ours.
const UNSAFE = new RegExp(`\\x1b\\[[0-9;]*m|[${CONTROLS_BUT_LAYOUT}]`, 'g');
const ANY_UNSAFE = new RegExp(`[${CONTROLS_BUT_LAYOUT}]`);

export function terminalSafe(text: string, color: boolean): string {
  // A scan without a match allocates nothing: the usual case, and the whole cost, of a long plain list.
  if (!ANY_UNSAFE.test(text)) return text;
  return text.replace(UNSAFE, (match) => (match.length > 1 ? (color ? match : `\\x1b${match.slice(1)}`) : visible(match)));
}

/**
 * JSON text (a --json document, an export, stored state) to stdout: piped, exactly as given; on a terminal the
 * controls a string may hold raw (C1, bidi) go as \uXXXX escapes, the same JSON but nothing a terminal obeys.
 */
export function writeJson(text: string): void {
  writeStdout(stdoutIsTerminal() ? jsonForTerminal(text) : text);
}

/** A renderer for results that need no style: a sentence. */
export const sentence =
  <T>(make: (result: T) => string): Renderer<T> =>
  (result) =>
    make(result);
