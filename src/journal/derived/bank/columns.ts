// The case bank's per-slot numbers: a base (decoded from a snapshot, never copied: a typed array, numbers read
// on demand from the snapshot's pages, or one value throughout) and a tail of slots added since. Appending to a
// 100k-slot column must not copy it: a bank decoded to answer one query often folds a record or two written after
// its snapshot.

export type Typed = Float64Array | Uint32Array | Uint8Array;
type TypedCtor<T extends Typed> = { new (length: number): T; BYTES_PER_ELEMENT: number };

/** Numbers read on demand (a snapshot's column, page by page). */
export interface Numbers {
  readonly length: number;
  get(i: number): number;
}

export class Column<T extends Typed> {
  private readonly typed: T | undefined;
  private readonly lazy: Numbers | undefined;
  /** The value of every base slot, for a base that holds one value throughout (nothing is allocated for it). */
  private readonly constant: number | undefined;
  private readonly baseLength: number;
  /** Values set over a base that is read on demand (it is never written). */
  private readonly overlay = new Map<number, number>();
  private readonly tail: number[] = [];

  constructor(ctor: TypedCtor<T>, initial?: T | Numbers | { readonly length: number; readonly every: number }) {
    if (initial === undefined || ArrayBuffer.isView(initial)) this.typed = (initial as T | undefined) ?? new ctor(0);
    else if ('every' in initial) this.constant = initial.every;
    else this.lazy = initial;
    this.baseLength = initial?.length ?? 0;
  }

  get length(): number {
    return this.baseLength + this.tail.length;
  }

  get(i: number): number {
    if (i >= this.baseLength) return this.tail[i - this.baseLength]!;
    if (this.typed !== undefined) return this.typed[i]!;
    if (this.overlay.size > 0 && this.overlay.has(i)) return this.overlay.get(i)!;
    return this.constant ?? this.lazy!.get(i);
  }

  set(i: number, value: number): void {
    if (i >= this.baseLength) this.tail[i - this.baseLength] = value;
    else if (this.typed !== undefined) this.typed[i] = value;
    else this.overlay.set(i, value);
  }

  /**
   * The values of slots from..to-1: the base read in bulk (one slice of a snapshot's pages where it can, not a
   * get per slot), with what was set over it.
   */
  range(from: number, to: number): Float64Array {
    const out = new Float64Array(Math.max(0, to - from));
    const baseTo = Math.min(to, this.baseLength);
    if (from < baseTo) {
      if (this.typed !== undefined) out.set(this.typed.subarray(from, baseTo));
      else if (this.constant !== undefined) out.fill(this.constant, 0, baseTo - from);
      else {
        const lazy = this.lazy as Numbers & { slice?(from: number, to: number): ArrayLike<number> };
        if (lazy.slice !== undefined) out.set(lazy.slice(from, baseTo));
        else for (let i = from; i < baseTo; i++) out[i - from] = lazy.get(i);
      }
      for (const [i, value] of this.overlay) if (i >= from && i < baseTo) out[i - from] = value;
    }
    for (let i = Math.max(from, this.baseLength); i < to; i++) out[i - from] = this.tail[i - this.baseLength]!;
    return out;
  }

  push(value: number): void {
    this.tail.push(value);
  }

  /**
   * The values set over the base since (slot → value): what a bank's delta carries. undefined for a base held
   * whole, whose sets are written into it (only an empty bank, or one built in a test, has such a base).
   */
  overlaid(): ReadonlyMap<number, number> | undefined {
    if (this.typed !== undefined) return this.baseLength === 0 ? this.overlay : undefined;
    return this.overlay;
  }
}

export const f64 = (initial?: Float64Array | Numbers) => new Column(Float64Array, initial);
export const u32 = (initial?: Uint32Array | Numbers) => new Column(Uint32Array, initial);
export const u8 = (initial?: Uint8Array | Numbers | { readonly length: number; readonly every: number }) => new Column(Uint8Array, initial);
