// Reading the lock's enter/exit side log (CRUX_TEST_LOCK_LOG): proves that no two holders ever overlapped; and its
// log of waiters' sleeps (CRUX_TEST_LOCK_WAITS): proves that a release wakes one waiter.
//
// Lines, in the order the kernel appended them (O_APPEND): `enter <pid> <ns> <token>`, `exit <pid> <ns> <token>`
// (the token tells apart processes of different PID namespaces that share a pid), and
// `kill <pid> <ns>`, which the test writes *before* it sends SIGKILL. A killed holder never writes `exit`;
// its section ends at its death, which comes after its `kill` line. So an `enter` while another process is
// inside is an overlap unless that process's `kill` line came first.

import { existsSync, readFileSync } from 'node:fs';

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

/** Waits until some process has entered the lock (while `alive()`), answering its pid: a writer not known beforehand. */
export async function firstEntered(path: string, alive: () => boolean): Promise<number | undefined> {
  const entered = () => (existsSync(path) ? parseLockLog(readFileSync(path, 'utf8')).find((e) => e.kind === 'enter')?.pid : undefined);
  while (alive() && entered() === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
  return entered();
}

/**
 * The sleeps of each waiter in a CRUX_TEST_LOCK_WAITS log (`wait <pid> <ns> <token> <on> [<their pid>]`): pid →
 * what it slept on, in order: `ahead <pid>` (a waiter ahead of it), `holder <pid>`, or `back-off`.
 */
export function readWaits(path: string): Map<number, string[]> {
  const waits = new Map<number, string[]>();
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  for (const line of text.split('\n').filter(Boolean)) {
    const [kind, pid, , , ...on] = line.split(' ');
    if (kind !== 'wait' || !pid || on.length === 0) throw new Error(`bad lock wait line: ${line}`);
    waits.set(Number(pid), [...(waits.get(Number(pid)) ?? []), on.join(' ')]);
  }
  return waits;
}

/** Waits until process `pid` has gone to sleep on `on` (`ahead <pid>`, …) in the CRUX_TEST_LOCK_WAITS log at `path` (while `alive()`), polling every 5 ms. */
export async function untilSlept(path: string, pid: number | undefined, on: (sleep: string) => boolean, alive: () => boolean): Promise<void> {
  while (alive() && !(readWaits(path).get(pid!) ?? []).some(on)) await new Promise((resolve) => setTimeout(resolve, 5));
}
