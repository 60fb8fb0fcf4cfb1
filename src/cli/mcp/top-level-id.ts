// The `id` member of a JSON object read as a stream of bytes, never held whole: an oversized request is
// refused with its own id (so the client's pending call fails at once rather than waiting for a timeout),
// while the megabytes around it are dropped as they arrive. Only the top level counts: an "id" inside params
// is not the request's. The bytes need not be valid JSON; what is not found stays undefined.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MAX_ID_BYTES = 256;

export class TopLevelId {
  id: string | number | undefined;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private expectKey = false;
  /** The first bytes of the key being read at depth 1 (three are enough to tell "id" apart). */
  private key: number[] | undefined;
  private keyIsId = false;
  /** The raw bytes of the id's value, while it is read. */
  private value: number[] | undefined;
  private done = false;

  feed(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length && !this.done; i += 1) this.step(bytes[i]!);
  }

  private step(b: number): void {
    const endsValue = this.depth === 1 && !this.inString && (b === 0x2c || b === 0x7d);
    if (this.value !== undefined && !endsValue && this.value.length < MAX_ID_BYTES) this.value.push(b);
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (b === BACKSLASH) this.escaped = true;
      else if (b === QUOTE) {
        this.inString = false;
        if (this.key !== undefined) {
          this.keyIsId = this.key.length === 2 && this.key[0] === 0x69 && this.key[1] === 0x64;
          this.key = undefined;
        }
        return;
      }
      if (this.key !== undefined && this.key.length < 3) this.key.push(b);
      return;
    }
    if (b === QUOTE) {
      this.inString = true;
      if (this.depth === 1 && this.expectKey) {
        this.key = [];
        this.expectKey = false;
      }
    } else if (b === 0x7b || b === 0x5b) {
      this.depth += 1;
      if (this.depth === 1) this.expectKey = b === 0x7b;
    } else if (b === 0x7d || b === 0x5d) {
      if (endsValue) this.finish();
      this.depth -= 1;
    } else if (this.depth === 1 && b === 0x2c) {
      this.finish();
      this.expectKey = true;
    } else if (this.depth === 1 && b === 0x3a && this.keyIsId) {
      this.value = [];
      this.keyIsId = false;
    }
  }

  private finish(): void {
    if (this.value === undefined) return;
    try {
      const parsed = JSON.parse(Buffer.from(this.value).toString('utf8')) as unknown;
      if (typeof parsed === 'string' || typeof parsed === 'number') this.id = parsed;
    } catch {
      // Not an id a response can name: the refusal goes out with id null.
    }
    this.value = undefined;
    this.done = this.id !== undefined;
  }
}
