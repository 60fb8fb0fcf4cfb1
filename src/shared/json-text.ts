// JSON as text, the one module for it: validation (JSON.parse), spans of members and elements, minifying, and
// whether the Crux daemon's serde_json could read a text.
//
// State and facts travel as the bytes they were written in: JSON.parse + JSON.stringify would rewrite
// numbers (12345678901234567890, 1.0, 1e400) and move integer-like keys, so crux validates with JSON.parse
// (iterative in V8: no depth limit, duplicate keys allowed, as `session put` accepts them) and then only
// ever copies tokens of the validated text. Every scanner here is a loop over validated text, never a
// recursion or a regex with a repeated group, so depth and megabytes of escapes cannot overflow the stack.

export class JsonTextError extends Error {}

/** One member of an object: its key (decoded) and the raw text of its value. */
export interface RawMember {
  readonly key: string;
  readonly raw: string;
  /** The value with the whitespace around it: all that stands between its colon and the next `,` or `}`. */
  readonly padded: string;
}

/** The parsed value; throws JsonTextError (JSON.parse's reason) unless `text` is exactly one JSON value. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new JsonTextError((error as Error).message);
  }
}

const isWs = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function skipWs(text: string, pos: number): number {
  while (pos < text.length && isWs(text.charCodeAt(pos))) pos += 1;
  return pos;
}

/** The index just past the string token whose opening quote is at `start` (validated text). */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    let b = quote - 1;
    while (text.charCodeAt(b) === 0x5c) b -= 1;
    if ((quote - 1 - b) % 2 === 0) return quote + 1; // an even run of backslashes escapes nothing
    from = quote + 1;
  }
}

/** The index just past the value that starts at `pos` (validated text). */
function valueEnd(text: string, pos: number): number {
  const first = text.charCodeAt(pos);
  if (first === 0x22) return stringEnd(text, pos);
  if (first !== 0x7b && first !== 0x5b) {
    let i = pos;
    while (i < text.length && !isWs(text.charCodeAt(i)) && !',}]'.includes(text[i]!)) i += 1;
    return i;
  }
  let depth = 0;
  for (let i = pos; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i) - 1;
    else if (c === 0x7b || c === 0x5b) depth += 1;
    else if (c === 0x7d || c === 0x5d) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return text.length;
}

/**
 * The members of a JSON object text in order, each key with the raw text of its value — repeated keys
 * included, each where it stands (JSON.parse keeps the last). Throws JsonTextError when `text` is not
 * valid JSON or not an object.
 */
export function objectMembers(text: string): RawMember[] {
  const parsed = parseJsonText(text);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new JsonTextError('not a JSON object');
  const members: RawMember[] = [];
  let pos = skipWs(text, skipWs(text, 0) + 1);
  while (text.charCodeAt(pos) === 0x22) {
    const keyEnd = stringEnd(text, pos);
    const key = JSON.parse(text.slice(pos, keyEnd)) as string;
    const afterColon = skipWs(text, keyEnd) + 1;
    const start = skipWs(text, afterColon);
    const end = valueEnd(text, start);
    pos = skipWs(text, end);
    members.push({ key, raw: text.slice(start, end), padded: text.slice(afterColon, pos) });
    if (text.charCodeAt(pos) === 0x2c) pos = skipWs(text, pos + 1);
  }
  return members;
}

/** The raw text of each element of a JSON array text; throws JsonTextError when it is not one. */
export function arrayElements(text: string): string[] {
  if (!Array.isArray(parseJsonText(text))) throw new JsonTextError('not a JSON array');
  const out: string[] = [];
  let pos = skipWs(text, skipWs(text, 0) + 1);
  while (pos < text.length && text.charCodeAt(pos) !== 0x5d) {
    const end = valueEnd(text, pos);
    out.push(text.slice(pos, end));
    pos = skipWs(text, end);
    if (text.charCodeAt(pos) === 0x2c) pos = skipWs(text, pos + 1);
  }
  return out;
}

/**
 * Removes insignificant whitespace (what serde_json's compact writer never emits), copying every token
 * verbatim: numbers keep their spelling, strings their escapes, objects their key order and repeats.
 * Throws JsonTextError when `text` is not valid JSON.
 */
export function minifyJson(text: string): string {
  parseJsonText(text);
  let out = '';
  let runStart = 0;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i);
    else if (isWs(c)) {
      out += text.slice(runStart, i);
      i = skipWs(text, i);
      runStart = i;
    } else i += 1;
  }
  return out + text.slice(runStart);
}

/** serde_json's recursion limit: reading the 128th nested array or object fails. */
export const SERDE_MAX_DEPTH = 127;

/**
 * Why the Crux daemon's serde_json would refuse to read `text` (valid JSON), or undefined when it would
 * read it: a number out of f64 range (1e400), a lone UTF-16 surrogate escape, or nesting past its limit.
 * `depth` is the nesting the text sits at inside the document the daemon reads.
 */
export function serdeIncompatibility(text: string, depth = 0): string | undefined {
  let level = depth;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      const lone = loneSurrogate(text, i + 1, end - 1);
      if (lone !== undefined) return `a lone surrogate escape ${lone} (serde_json reads no unpaired surrogate)`;
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      level += 1;
      if (level > SERDE_MAX_DEPTH) return `nesting deeper than ${SERDE_MAX_DEPTH} levels (serde_json's recursion limit)`;
      i += 1;
    } else if (c === 0x7d || c === 0x5d) {
      level -= 1;
      i += 1;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      while (end < text.length && /[0-9eE.+-]/.test(text[end]!)) end += 1;
      const token = text.slice(i, end);
      if (!Number.isFinite(Number(token))) return `the number ${token.length > 40 ? `${token.slice(0, 40)}…` : token} is out of the range of an f64`;
      i = end;
    } else i += 1;
  }
  return undefined;
}

const HEX4 = /^[0-9a-fA-F]{4}$/;

/** The first \uXXXX escape in text[from, to) that is a surrogate without its partner. */
function loneSurrogate(text: string, from: number, to: number): string | undefined {
  let i = text.indexOf('\\', from);
  while (i !== -1 && i < to) {
    if (text[i + 1] !== 'u') {
      i = text.indexOf('\\', i + 2);
      continue;
    }
    const hex = text.slice(i + 2, i + 6);
    const unit = HEX4.test(hex) ? parseInt(hex, 16) : 0;
    if (unit >= 0xdc00 && unit <= 0xdfff) return `\\u${hex}`;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.slice(i + 8, i + 12);
      const low = text.slice(i + 6, i + 8) === '\\u' && HEX4.test(next) ? parseInt(next, 16) : 0;
      if (low < 0xdc00 || low > 0xdfff) return `\\u${hex}`;
      i = text.indexOf('\\', i + 12);
      continue;
    }
    i = text.indexOf('\\', i + 6);
  }
  return undefined;
}
