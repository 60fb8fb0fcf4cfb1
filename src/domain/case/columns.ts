// Growable typed-array columns: the case bank's per-slot numbers, cheap to encode and to load back.

type Typed = Float64Array | Uint32Array | Uint8Array;
type TypedCtor<T extends Typed> = { new (length: number): T; BYTES_PER_ELEMENT: number };

export class Column<T extends Typed> {
  private data: T;
  length = 0;

  constructor(
    private readonly ctor: TypedCtor<T>,
    initial?: T,
  ) {
    this.data = initial ?? new ctor(16);
    this.length = initial?.length ?? 0;
  }

  get(i: number): number {
    return this.data[i]!;
  }

  set(i: number, value: number): void {
    this.data[i] = value;
  }

  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new this.ctor(Math.max(16, this.data.length * 2));
      grown.set(this.data as never);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }

  /** The used part, as a view (no copy). */
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }
}

export const f64 = (initial?: Float64Array) => new Column(Float64Array, initial);
export const u32 = (initial?: Uint32Array) => new Column(Uint32Array, initial);
export const u8 = (initial?: Uint8Array) => new Column(Uint8Array, initial);
