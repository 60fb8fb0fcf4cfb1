// Printing a result: one JSON document with --json, nothing with --quiet, else the human rendering.
import type { Style } from './style';
import { writeStdout } from './stdout';

export interface OutputMode {
  readonly json: boolean;
  readonly quiet: boolean;
  readonly color: boolean;
}

export type Renderer<T> = (result: T, style: Style) => string;

export async function emit<T>(mode: OutputMode, result: T, render: Renderer<T>): Promise<void> {
  if (mode.json) {
    writeStdout(`${JSON.stringify(result)}\n`);
    return;
  }
  if (mode.quiet) return;
  // A renderer that takes no style (a sentence) does not pay for loading chalk and cli-table3.
  const style = render.length >= 2 ? await (await import('./style')).loadStyle(mode.color) : (undefined as unknown as Style);
  const text = render(result, style);
  if (text !== '') writeStdout(text.endsWith('\n') ? text : `${text}\n`);
}

/** A renderer for results that need no style: a sentence. */
export const sentence = <T>(make: (result: T) => string): Renderer<T> => (result) => make(result);
