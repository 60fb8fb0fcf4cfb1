// What this process has committed to its store: so that output which cannot be written after a committed
// write (a closed or full stdout) is reported as what it is — done, unseen — and not as a failure (SPEC §3).

const done: string[] = [];

/** Told by a store once a write transaction is durable: what it wrote, in a few words ("3 records to cases.jsonl"). */
export function noteCommit(what: string): void {
  done.push(what);
}

/** Everything committed so far, in order; empty when this process changed nothing. */
export const committed = (): readonly string[] => done;
