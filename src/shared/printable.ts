// Text from outside (stored fields, ids, package members, a parser's excerpt of its input) made safe to print:
// every character a terminal would act on is written visibly instead, so output never moves the cursor,
// sets a title, opens a hyperlink or reorders what follows.

// C0, DEL, C1, the Unicode line and paragraph separators, and the bidi controls (marks, embeddings,
// overrides, isolates, the Arabic letter mark): each can change what a terminal shows or where.
/** The characters escaped, but for newline and tab (a regex character-class body). */
export const CONTROLS_BUT_LAYOUT = '\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069';
const UNSAFE = new RegExp(`[\\t\\n${CONTROLS_BUT_LAYOUT}]`, 'g');
const UNSAFE_KEEPING_LINES = new RegExp(`[${CONTROLS_BUT_LAYOUT}]`, 'g');

const NAMED: Record<string, string> = { '\n': '\\n', '\t': '\\t', '\r': '\\r' };

/** One control character as an escape: `\\n`, `\\x1b`, `\\u202e`. */
export function visible(c: string): string {
  const named = NAMED[c];
  if (named !== undefined) return named;
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** One line: every control character, newlines included, written as an escape (`\x1b`, `\n`, `\u202e`). */
export function printable(text: string): string {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(text) ? text.replace(UNSAFE, visible) : text;
}

/** As printable, but newlines and tabs stay (multi-line fields shown as blocks). */
export function printableBlock(text: string): string {
  UNSAFE_KEEPING_LINES.lastIndex = 0;
  return UNSAFE_KEEPING_LINES.test(text) ? text.replace(UNSAFE_KEEPING_LINES, visible) : text;
}

// An error message quotes what was refused (an id with a zero-width space, an unknown option): every format
// character (\p{Cf}) is shown too, so the person sees why two look-alike ids differ.
// (Made on first use: the \p{Cf} class costs start-up time, and most calls print no message.)
let unsafeInMessages: RegExp | undefined;

/** As printable, and every format character (zero-width, bidi, soft hyphen) escaped as well. */
export function printableMessage(text: string): string {
  unsafeInMessages ??= new RegExp(`[\\t\\n${CONTROLS_BUT_LAYOUT}\\p{Cf}]`, 'gu');
  return text.replace(unsafeInMessages, (c) => {
    const code = c.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : visible(c);
  });
}

// What JSON may carry raw inside a string but a terminal would act on: DEL, C1, bidi controls, line separators.
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/**
 * JSON text with those characters written as `\uXXXX` escapes: the same JSON value (they can only occur inside
 * strings), safe to show on a terminal. C0 controls cannot occur raw in valid JSON but as whitespace.
 */
export function jsonForTerminal(text: string): string {
  RAW_IN_JSON.lastIndex = 0;
  return RAW_IN_JSON.test(text) ? text.replace(RAW_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
}
