// The case bank's per-slot numbers: a typed-array base (decoded from a snapshot, never copied) and a tail of
// slots added since. Appending to a 100k-slot column must not copy it: a bank decoded to answer one query
// often folds a record or two written after its snapshot.

type Typed = Float64Array | Uint32Array | Uint8Array;
type TypedCtor<T extends Typed> = { new (length: number): T; BYTES_PER_ELEMENT: number };

export class Column<T extends Typed> {
  private readonly base: T;
  private readonly tail: number[] = [];

  constructor(
    private readonly ctor: TypedCtor<T>,
    initial?: T,
  ) {
    this.base = initial ?? new ctor(0);
  }

  get length(): number {
    return this.base.length + this.tail.length;
  }

  get(i: number): number {
    const n = this.base.length;
    return i < n ? this.base[i]! : this.tail[i - n]!;
  }

  set(i: number, value: number): void {
    const n = this.base.length;
    if (i < n) this.base[i] = value;
    else this.tail[i - n] = value;
  }

  push(value: number): void {
    this.tail.push(value);
  }

  /** Every slot as one typed array: the base itself when nothing was added, else a copy. */
  view(): T {
    if (this.tail.length === 0) return this.base;
    const out = new this.ctor(this.length);
    out.set(this.base as never);
    out.set(this.tail as never, this.base.length);
    return out;
  }
}

export const f64 = (initial?: Float64Array) => new Column(Float64Array, initial);
export const u32 = (initial?: Uint32Array) => new Column(Uint32Array, initial);
export const u8 = (initial?: Uint8Array) => new Column(Uint8Array, initial);
