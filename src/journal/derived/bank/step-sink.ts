// Where one step of the stepwise bank encoder (steps.ts), or a section of the streamed build (stream-io.ts), puts its
// bytes: a buffer that grows as needed, little-endian numbers appended one by one, and the work done so far against
// the step's budget.
export class StepSink {
  private buf: Buffer;
  // Numbers go in through a DataView: V8 compiles its setters inline, where Buffer's writeDoubleLE runs as JS.
  private view: DataView;
  length = 0;
  /** Bytes written and read: the step stops at its next boundary once this reaches the budget. */
  work = 0;

  constructor(private readonly budget: number) {
    // A step stops at the first batch boundary past its budget: room for that overshoot, so it seldom grows.
    this.buf = Buffer.allocUnsafe(Math.min(Math.max(budget, 4096), 1 << 24) + 128 * 1024);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  }

  get full(): boolean {
    return this.work >= this.budget;
  }

  /** Room for `n` more bytes at once (a whole encoding, whose length is known, is made without growing). */
  reserve(n: number): void {
    this.room(n);
  }

  protected room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(Math.min(this.buf.length * 2, this.length + n + (1 << 24)), this.length + n));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
    this.view = new DataView(grown.buffer, grown.byteOffset, grown.length);
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.advance(b.length);
  }

  /** A string as UTF-8. */
  text(t: string): void {
    this.room(3 * t.length);
    this.advance(this.buf.write(t, this.length, 'utf8'));
  }

  zeros(n: number): void {
    this.room(n);
    this.buf.fill(0, this.length, this.length + n);
    this.advance(n);
  }

  u8(v: number): void {
    this.room(1);
    this.buf[this.length] = v;
    this.advance(1);
  }

  u16(v: number): void {
    this.room(2);
    this.view.setUint16(this.length, v, true);
    this.advance(2);
  }

  u32(v: number): void {
    this.room(4);
    this.view.setUint32(this.length, v, true);
    this.advance(4);
  }

  f64(v: number): void {
    this.room(8);
    this.view.setFloat64(this.length, v, true);
    this.advance(8);
  }

  /** Counts `n` bytes read from the bank against the budget: a step's time follows what it reads as well as what it writes. */
  read(n: number): void {
    this.work += n;
  }

  /** The bytes written (a view of the buffer). */
  take(): Buffer {
    return this.buf.subarray(0, this.length);
  }

  private advance(n: number): void {
    this.length += n;
    this.work += n;
  }
}
