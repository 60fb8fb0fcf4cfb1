// Where one step of the stepwise bank encoder (steps.ts) puts its bytes: a buffer that grows as needed, little-
// endian numbers appended one by one, and the work done so far against the step's budget.
export class StepSink {
  private buf: Buffer;
  length = 0;
  /** Bytes written and read: the step stops at its next boundary once this reaches the budget. */
  work = 0;

  constructor(private readonly budget: number) {
    // A step stops at the first batch boundary past its budget: room for that overshoot, so it seldom grows.
    this.buf = Buffer.allocUnsafe(Math.max(budget, 4096) + 128 * 1024);
  }

  get full(): boolean {
    return this.work >= this.budget;
  }

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.advance(b.length);
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
    this.buf.writeUInt16LE(v, this.length);
    this.advance(2);
  }

  u32(v: number): void {
    this.room(4);
    this.buf.writeUInt32LE(v, this.length);
    this.advance(4);
  }

  f64(v: number): void {
    this.room(8);
    this.buf.writeDoubleLE(v, this.length);
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
