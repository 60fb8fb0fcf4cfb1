// Who is told what a read or a write meets: damaged records passed over, and how far long work has come.

/** Told of every record a read passes over (`file:line: reason`), and of a write's progress. */
export interface Reporter {
  warn(message: string): void;
  /** A damaged line a replay passed over, as data (--json documents carry it as a warning). */
  damage?(file: string, line: number, reason: string): void;
  /** How far long work inside a write has come (encoding, applying, writing a batch): for a progress line. */
  progress?(phase: WorkPhase, done: number, total: number): void;
}

export type WorkPhase = 'encoding' | 'applying' | 'writing';

/** Told after each record of a long check or compact: the journal, bytes (or records) done, and the total. */
export type ProgressSink = (file: string, done: number, total: number) => void;
