// The streamed bank build's I/O (stream.ts): a section of the body written in order through a step's sink, the ids
// file appended through one, and a forward reader of a scratch file.
import type { ScratchFile } from '../../codec/store-spec';
import { StepSink } from './step-sink';

export type Put = (bytes: Uint8Array, at: number) => void;

/** One section of the body, written in order through a step's sink flushed as it fills; `end` checks it came out at its planned length. */
export class Section extends StepSink {
  private written = 0;

  constructor(
    private readonly put: Put,
    private readonly at: number,
    private readonly planned: number,
  ) {
    super(SECTION_BUFFER);
  }

  protected override room(n: number): void {
    if (this.length + n > SECTION_BUFFER) this.flush();
    super.room(n);
  }

  override bytes(b: Uint8Array): void {
    if (b.length <= SECTION_BUFFER) super.bytes(b);
    else {
      this.flush();
      this.put(b, this.at + this.written);
      this.written += b.length;
    }
  }

  private flush(): void {
    if (this.length === 0) return;
    this.put(this.take(), this.at + this.written);
    this.written += this.length;
    this.length = 0;
  }

  end(): void {
    this.flush();
    if (this.written !== this.planned) throw new RangeError(`a streamed section came out at ${this.written} bytes, not ${this.planned}`);
  }
}

const SECTION_BUFFER = 1 << 16;

/** A scratch file appended through a buffer: ids as UTF-8, each at its offset. */
export class Staged {
  private readonly buf = Buffer.allocUnsafe(1 << 20);
  private used = 0;

  constructor(readonly file: ScratchFile) {}

  get size(): number {
    return this.file.size + this.used;
  }

  /** Appends `id`'s UTF-8 bytes: where they start, and how many. */
  add(id: string): [number, number] {
    const at = this.size;
    if (this.used + 3 * id.length > this.buf.length) this.flush();
    if (3 * id.length > this.buf.length) {
      const bytes = Buffer.from(id, 'utf8');
      this.file.append(bytes);
      return [at, bytes.length];
    }
    const n = this.buf.write(id, this.used, 'utf8');
    this.used += n;
    return [at, n];
  }

  flush(): void {
    if (this.used > 0) this.file.append(this.buf.subarray(0, this.used));
    this.used = 0;
  }
}

/** Reads a scratch file forwards: the bytes at increasing positions, a large read at a time. */
export class Forward {
  private buf = Buffer.allocUnsafe(1 << 20);
  private from = 0;
  private to = 0;

  constructor(private readonly file: ScratchFile) {}

  bytes(at: number, length: number): Uint8Array {
    if (at < this.from || at + length > this.to) {
      if (length > this.buf.length) this.buf = Buffer.allocUnsafe(length);
      const n = this.file.read(this.buf, at);
      if (n < length) throw new RangeError('a scratch file came back short');
      this.from = at;
      this.to = at + n;
    }
    return this.buf.subarray(at - this.from, at - this.from + length);
  }
}
