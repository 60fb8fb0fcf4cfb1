// What this process has committed to its store: so that output which cannot be written after a committed
// write (a closed or full stdout) is reported as what it is — done, unseen — and not as a failure (SPEC §3).
// A long-lived process (`crux mcp`) commits without end: the log keeps the first few and counts the rest, so
// its memory does not grow with the writes.

const KEPT = 8;
const done: string[] = [];
let more = 0;
/** What the commits made, by the names a caller finds it again by ("recorded case c_…"): the first few. */
const names: string[] = [];

/** Told by a store once a write transaction is durable: what it wrote, in a few words ("3 records to cases.jsonl"). */
export function noteCommit(what: string): void {
  if (done.length < KEPT) done.push(what);
  else more += 1;
}

/**
 * Told by an operation once its commit is durable, what it made under a name the caller did not choose (a case's
 * id, a handoff's): the one thing a caller whose output was lost needs, said in the line that reports the commit.
 */
export function nameCommit(name: string): void {
  if (names.length < KEPT) names.push(name);
}

/** A new run of the program starts with nothing committed (main(); the tests run many in one process). */
export function forgetCommits(): void {
  done.length = 0;
  names.length = 0;
  more = 0;
}

/**
 * What was committed so far, in order: what was made, by name, then the writes (the first few, then how many
 * more); empty when this process changed nothing.
 */
export const committed = (): readonly string[] =>
  done.length === 0 ? [] : [...names, ...done, ...(more === 0 ? [] : [`${more} more commit${more === 1 ? '' : 's'}`])];
