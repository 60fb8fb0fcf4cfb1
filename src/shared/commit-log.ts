// What this process has committed to its store: so that output which cannot be written after a committed
// write (a closed or full stdout) is reported as what it is — done, unseen — and not as a failure (SPEC §3).
// A long-lived process (`crux mcp`) commits without end: the log keeps the first few and counts the rest, so
// its memory does not grow with the writes.

const KEPT = 8;
const done: string[] = [];
let more = 0;

/** Told by a store once a write transaction is durable: what it wrote, in a few words ("3 records to cases.jsonl"). */
export function noteCommit(what: string): void {
  if (done.length < KEPT) done.push(what);
  else more += 1;
}

/** What was committed so far, in order (the first few, then how many more); empty when this process changed nothing. */
export const committed = (): readonly string[] => (more === 0 ? done : [...done, `${more} more commit${more === 1 ? '' : 's'}`]);
