// Test hooks: CRUX_TEST_CRASH_AT=<point> kills the process with SIGKILL at that point, to prove crash safety;
// CRUX_TEST_LOCK_LOG=<file> records each entry to and exit from the lock (O_APPEND), to prove no two holders
// overlap; CRUX_TEST_LOCK_HOLD_MS=<n> stays that long inside the lock, so a test can kill a holder there.
import * as fs from 'node:fs';

export function crashPoint(point: string): void {
  if (process.env.CRUX_TEST_CRASH_AT === point) process.kill(process.pid, 'SIGKILL');
}

export function traceLock(event: 'enter' | 'exit'): void {
  const log = process.env.CRUX_TEST_LOCK_LOG;
  if (log) fs.appendFileSync(log, `${event} ${process.pid} ${process.hrtime.bigint()}\n`);
}

export async function holdLockForTest(): Promise<void> {
  const ms = Number(process.env.CRUX_TEST_LOCK_HOLD_MS ?? 0);
  if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
}
