// JSON as text: validates it, finds the raw bytes of an object's members, and minifies without re-encoding a token.
//
// JSON.parse + JSON.stringify would rewrite numbers (12345678901234567890, 1.0, 1e400) and move integer-like
// keys; a package must carry the session state and each fact exactly as they were written, so crux works on
// the text itself and only ever copies tokens, never re-serializes them.

export class JsonTextError extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(`${message} at character ${at}`);
  }
}

/** One member of an object: its key (decoded) and the raw text of its value. */
export interface RawMember {
  readonly key: string;
  readonly raw: string;
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const SHORT_ESCAPES = new Set([...'"\\/bfnrt'].map((c) => c.charCodeAt(0)));

/**
 * The end (exclusive) of the JSON string token that starts with the `"` at `start`, or -1 when it is not
 * one: no raw control characters, escapes as RFC 8259 allows. A loop, not a regex: a regex repeating a
 * group keeps a backtrack entry per character or escape and overflows the stack on a few MB of string.
 */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) return -1;
    if (c !== 0x5c) {
      i += 1;
      continue;
    }
    const e = text.charCodeAt(i + 1);
    if (e === 0x75) {
      for (let k = 2; k < 6; k += 1) if (!isHex(text.charCodeAt(i + k))) return -1;
      i += 6;
    } else if (SHORT_ESCAPES.has(e)) i += 2;
    else return -1;
  }
  return -1;
}

class Reader {
  pos = 0;
  constructor(readonly text: string) {}

  skipWs(): void {
    while (this.pos < this.text.length && WS.has(this.text.charCodeAt(this.pos))) this.pos += 1;
  }

  fail(message: string): never {
    throw new JsonTextError(message, this.pos);
  }

  /** Reads one value; returns its [start, end) span. */
  value(depth: number): [number, number] {
    if (depth > 512) this.fail('nested too deeply');
    this.skipWs();
    const start = this.pos;
    const c = this.text[this.pos];
    if (c === '{') this.object(depth);
    else if (c === '[') this.array(depth);
    else if (c === '"') this.string();
    else if (c === 't' || c === 'f' || c === 'n') this.literal();
    else this.number();
    return [start, this.pos];
  }

  string(): string {
    const end = stringEnd(this.text, this.pos);
    if (end === -1) this.fail('bad string');
    const token = this.text.slice(this.pos, end);
    this.pos = end;
    return JSON.parse(token) as string;
  }

  number(): void {
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    if (m === null) this.fail(this.pos >= this.text.length ? 'unexpected end' : 'unexpected character');
    this.pos += m[0].length;
  }

  literal(): void {
    for (const word of ['true', 'false', 'null']) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return;
      }
    }
    this.fail('unexpected character');
  }

  array(depth: number): void {
    this.pos += 1;
    this.skipWs();
    if (this.text[this.pos] === ']') {
      this.pos += 1;
      return;
    }
    for (;;) {
      this.value(depth + 1);
      this.skipWs();
      const c = this.text[this.pos++];
      if (c === ']') return;
      if (c !== ',') this.fail('expected "," or "]"');
    }
  }

  /** Reads an object; returns its members in order (duplicate keys are refused, as serde refuses them). */
  object(depth: number): RawMember[] {
    const members: RawMember[] = [];
    const seen = new Set<string>();
    this.pos += 1;
    this.skipWs();
    if (this.text[this.pos] === '}') {
      this.pos += 1;
      return members;
    }
    for (;;) {
      this.skipWs();
      if (this.text[this.pos] !== '"') this.fail('expected a key');
      const key = this.string();
      if (seen.has(key)) this.fail(`duplicate key ${JSON.stringify(key)}`);
      seen.add(key);
      this.skipWs();
      if (this.text[this.pos++] !== ':') this.fail('expected ":"');
      const [start, end] = this.value(depth + 1);
      members.push({ key, raw: this.text.slice(start, end) });
      this.skipWs();
      const c = this.text[this.pos++];
      if (c === '}') return members;
      if (c !== ',') this.fail('expected "," or "}"');
    }
  }

  end(): void {
    this.skipWs();
    if (this.pos !== this.text.length) this.fail('unexpected text after the JSON value');
  }
}

/** Throws JsonTextError unless `text` is exactly one JSON value (surrounding whitespace allowed). */
export function validateJson(text: string): void {
  const r = new Reader(text);
  r.value(0);
  r.end();
}

/** The members of a JSON object, each with its raw value text; throws when `text` is not one object. */
export function readObjectMembers(text: string): RawMember[] {
  const r = new Reader(text);
  r.skipWs();
  if (r.text[r.pos] !== '{') r.fail('expected a JSON object');
  const members = r.object(0);
  r.end();
  return members;
}

/** The raw text of each element of a JSON array. */
export function readArrayElements(text: string): string[] {
  const r = new Reader(text);
  r.skipWs();
  if (r.text[r.pos] !== '[') r.fail('expected a JSON array');
  r.pos += 1;
  const out: string[] = [];
  r.skipWs();
  if (r.text[r.pos] === ']') {
    r.pos += 1;
    r.end();
    return out;
  }
  for (;;) {
    const [start, end] = r.value(1);
    out.push(text.slice(start, end));
    r.skipWs();
    const c = r.text[r.pos++];
    if (c === ']') break;
    if (c !== ',') r.fail('expected "," or "]"');
  }
  r.end();
  return out;
}

/**
 * Removes insignificant whitespace (what serde_json's compact writer never emits), copying every token
 * verbatim: numbers keep their spelling, strings their escapes, objects their key order.
 */
export function minifyJson(text: string): string {
  validateJson(text);
  let out = '';
  let i = 0;
  let runStart = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      i = stringEnd(text, i); // validated above: never -1
    } else if (WS.has(code)) {
      out += text.slice(runStart, i);
      while (i < text.length && WS.has(text.charCodeAt(i))) i += 1;
      runStart = i;
    } else {
      i += 1;
    }
  }
  return out + text.slice(runStart);
}

/** Every string value in a parsed JSON document (object keys excluded), in document order; iterative, so depth cannot overflow the stack. */
export function collectStringValues(root: unknown): string[] {
  const out: string[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') out.push(value);
    else if (Array.isArray(value)) for (let i = value.length - 1; i >= 0; i -= 1) stack.push(value[i]);
    else if (value !== null && typeof value === 'object') {
      const values = Object.values(value);
      for (let i = values.length - 1; i >= 0; i -= 1) stack.push(values[i]);
    }
  }
  return out;
}

/** Compares two strings by their UTF-8 bytes, the order of Rust's String and BTreeSet. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
