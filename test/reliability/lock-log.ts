// Reading the lock's enter/exit side log (CRUX_TEST_LOCK_LOG): proves that no two holders ever overlapped.
//
// Lines, in the order the kernel appended them (O_APPEND): `enter <pid> <ns>`, `exit <pid> <ns>`, and
// `kill <pid> <ns>`, which the test writes *before* it sends SIGKILL. A killed holder never writes `exit`;
// its section ends at its death, which comes after its `kill` line. So an `enter` while another process is
// inside is an overlap unless that process's `kill` line came first.

export interface LockEvent {
  readonly kind: 'enter' | 'exit' | 'kill';
  readonly pid: number;
  readonly ns: bigint;
}

export function parseLockLog(text: string): LockEvent[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [kind, pid, ns] = line.split(' ');
      if ((kind !== 'enter' && kind !== 'exit' && kind !== 'kill') || !pid || !ns) throw new Error(`bad lock log line: ${line}`);
      return { kind, pid: Number(pid), ns: BigInt(ns) };
    });
}

/** The overlaps found (empty when the lock held); also the number of sections and the killed holders. */
export function findOverlaps(events: readonly LockEvent[]): { overlaps: string[]; sections: number; killedInside: number } {
  const overlaps: string[] = [];
  const killed = new Set<number>();
  let inside: number | undefined;
  let sections = 0;
  let killedInside = 0;
  events.forEach((e, i) => {
    if (e.kind === 'kill') {
      killed.add(e.pid);
      return;
    }
    if (e.kind === 'enter') {
      if (inside !== undefined) {
        if (killed.has(inside)) killedInside += 1;
        else overlaps.push(`line ${i + 1}: pid ${e.pid} entered while pid ${inside} was inside`);
      }
      inside = e.pid;
      sections += 1;
      return;
    }
    if (inside !== e.pid) overlaps.push(`line ${i + 1}: pid ${e.pid} left a section it was not in (inside: ${inside})`);
    inside = undefined;
  });
  return { overlaps, sections, killedInside };
}
