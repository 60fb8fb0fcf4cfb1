// The live-bytes estimate of a keyed journal: the sum over keys of each key's largest line, roughly what
// compaction would keep. Carried in the index (base header, each log block) between invocations.
import type { LinePosition } from '../codec/scan';

export class LiveEstimate {
  private readonly largest = new Map<string, number>();
  total = 0;

  constructor(initial = 0) {
    this.total = initial;
  }

  /** Seeds a key's largest line from its known lines (when extending an index). */
  seed(key: string, lines: readonly LinePosition[]): void {
    if (!this.largest.has(key)) this.largest.set(key, Math.max(0, ...lines.map((l) => l.length)));
  }

  add(key: string, length: number): void {
    const before = this.largest.get(key) ?? 0;
    if (length > before) {
      this.largest.set(key, length);
      this.total += length - before;
    }
  }
}
