// Who is told what a read or a write meets: damaged records passed over, and how far long work has come.

/** Told of every record a read passes over (`file:line: reason`), and of a write's progress. */
export interface Reporter {
  warn(message: string): void;
  /**
   * A damaged line a read passed over, as data (--json documents carry it as a warning). false: the command was
   * told of this (file, line, reason) already — by another reader of the same command — and it is not said again.
   */
  damage?(file: string, line: number, reason: string): boolean | undefined;
  /** How far long work inside a write has come (encoding, applying, writing a batch): for a progress line. */
  progress?(phase: WorkPhase, done: number, total: number): void;
}

export type WorkPhase = 'encoding' | 'applying' | 'writing';

/** Told after each record of a long check or compact: the journal, bytes (or records) done, and the total. */
export type ProgressSink = (file: string, done: number, total: number) => void;

/**
 * Tells `reporter` of a damaged line a read passed over: as data, and `message` on stderr, each (file, line,
 * reason) once per command however many of its readers met it (SPEC §3).
 */
export function reportDamage(reporter: Reporter, damage: { file: string; line: number; reason: string }, message: string): void {
  if (reporter.damage?.(damage.file, damage.line, damage.reason) === false) return;
  reporter.warn(message);
}
