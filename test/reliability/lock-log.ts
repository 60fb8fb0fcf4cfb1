// Reading the lock's enter/exit side log (CRUX_TEST_LOCK_LOG): proves that no two holders ever overlapped.
//
// Lines, in the order the kernel appended them (O_APPEND): `enter <pid> <ns> <token>`, `exit <pid> <ns> <token>`
// (the token tells apart processes of different PID namespaces that share a pid), and
// `kill <pid> <ns>`, which the test writes *before* it sends SIGKILL. A killed holder never writes `exit`;
// its section ends at its death, which comes after its `kill` line. So an `enter` while another process is
// inside is an overlap unless that process's `kill` line came first.

import { readFileSync } from 'node:fs';

export interface LockEvent {
  readonly kind: 'enter' | 'exit' | 'kill';
  readonly pid: number;
  readonly ns: bigint;
  /** The process's own token (enter and exit lines); absent on kill lines. */
  readonly who?: string;
}

export function parseLockLog(text: string): LockEvent[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [kind, pid, ns, who] = line.split(' ');
      if ((kind !== 'enter' && kind !== 'exit' && kind !== 'kill') || !pid || !ns) throw new Error(`bad lock log line: ${line}`);
      return { kind, pid: Number(pid), ns: BigInt(ns), ...(who ? { who } : {}) };
    });
}

/** The overlaps found (empty when the lock held); also the number of sections and the killed holders. */
export function findOverlaps(events: readonly LockEvent[]): { overlaps: string[]; sections: number; killedInside: number } {
  const overlaps: string[] = [];
  const killed = new Set<number>();
  let inside: LockEvent | undefined;
  let sections = 0;
  let killedInside = 0;
  const same = (a: LockEvent, b: LockEvent) => a.pid === b.pid && a.who === b.who;
  events.forEach((e, i) => {
    if (e.kind === 'kill') {
      killed.add(e.pid);
      return;
    }
    if (e.kind === 'enter') {
      if (inside !== undefined) {
        if (killed.has(inside.pid)) killedInside += 1;
        else overlaps.push(`line ${i + 1}: pid ${e.pid} entered while pid ${inside.pid} was inside`);
      }
      inside = e;
      sections += 1;
      return;
    }
    if (inside === undefined || !same(inside, e)) overlaps.push(`line ${i + 1}: pid ${e.pid} left a section it was not in (inside: ${inside?.pid})`);
    inside = undefined;
  });
  return { overlaps, sections, killedInside };
}

/** Whether process `pid` has entered the lock (an `enter` line of its own in the log at `path`). */
export function hasEntered(path: string, pid: number | undefined): boolean {
  try {
    return readFileSync(path, 'utf8').includes(`enter ${pid} `);
  } catch {
    return false;
  }
}

/** Waits until process `pid` is inside the lock (while `alive()`, when given), polling every `ms`. */
export async function untilEntered(path: string, pid: number | undefined, ms = 5, alive: () => boolean = () => true): Promise<void> {
  while (alive() && !hasEntered(path, pid)) await new Promise((resolve) => setTimeout(resolve, ms));
}
