// Test hooks: CRUX_TEST_CRASH_AT=<point>[#n] kills the process with SIGKILL at that point, to prove crash safety;
// CRUX_TEST_TORN_WRITE=<bytes> makes an append write only that many bytes of its batch and then SIGKILLs (what a
// kill -9 or a power cut in the middle of write(2) leaves);
// CRUX_TEST_LOCK_LOG=<file> records each entry to and exit from the lock (O_APPEND), to prove no two holders
// overlap; CRUX_TEST_LOCK_WAITS=<file> records each time a waiter goes to sleep, and on whom (O_APPEND), to prove
// that a release wakes one waiter; CRUX_TEST_LOCK_HOLD_MS=<n> stays that long inside the lock, so a test can kill
// a holder there.
import { fs } from './fs';
import { testHook } from './test-hooks';

const passes = new Map<string, number>();

/** `<point>` kills at the first pass through the point; `<point>#<n>` at the n-th (e.g. the second journal). */
export function crashPoint(point: string): void {
  const at = testHook('CRUX_TEST_CRASH_AT');
  if (at === undefined || !at.startsWith(point)) return;
  const pass = (passes.get(point) ?? 0) + 1;
  passes.set(point, pass);
  if (at === point || at === `${point}#${pass}`) process.kill(process.pid, 'SIGKILL');
}

// A token per process: pids repeat across PID namespaces (every namespace has its own pid 2).
let token: string | undefined;

export function traceLock(event: 'enter' | 'exit'): void {
  const log = testHook('CRUX_TEST_LOCK_LOG');
  token ??= Math.random().toString(36).slice(2, 10);
  if (log) fs.appendFileSync(log, `${event} ${process.pid} ${process.hrtime.bigint()} ${token}\n`);
}

/** A waiter goes to sleep: on a contender ahead of it in the queue or on the holder (`pid`: that one's), or for a back-off. */
export function traceWait(on: 'ahead' | 'holder' | 'back-off', pid?: number): void {
  const log = testHook('CRUX_TEST_LOCK_WAITS');
  token ??= Math.random().toString(36).slice(2, 10);
  if (log) fs.appendFileSync(log, `wait ${process.pid} ${process.hrtime.bigint()} ${token} ${on}${pid === undefined ? '' : ` ${pid}`}\n`);
}

export async function holdLockForTest(): Promise<void> {
  const ms = Number(testHook('CRUX_TEST_LOCK_HOLD_MS') ?? 0);
  if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * With CRUX_TEST_TORN_WRITE=<n>: writes the first n bytes of `buf` at `position` (fewer than all of it) and
 * kills the process, as a writer dying inside write(2) would. Without it, does nothing.
 */
export function tornWriteForTest(fd: number, buf: Uint8Array, position: number): void {
  const at = testHook('CRUX_TEST_TORN_WRITE');
  if (at === undefined || at === '') return;
  const n = Math.min(Math.max(0, Number(at)), buf.length - 1);
  fs.writeSync(fd, buf, 0, n, position);
  process.kill(process.pid, 'SIGKILL');
}

/**
 * With CRUX_TEST_SNAPSHOT_PAUSE=<file>: creates <file> and waits until the test removes it (at most a minute), so that
 * a test does something at that moment (edits a row between a reader's fold and its snapshot save). Without it,
 * does nothing.
 */
export async function pauseForTest(hook: 'CRUX_TEST_SNAPSHOT_PAUSE'): Promise<void> {
  const file = testHook(hook);
  if (file === undefined || file === '') return;
  fs.writeFileSync(file, `${process.pid}\n`);
  for (let waited = 0; fs.existsSync(file) && waited < 60_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
}
