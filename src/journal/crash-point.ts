// Test hook: CRUX_TEST_CRASH_AT=<point> kills the process with SIGKILL at that point, to prove crash safety.
export function crashPoint(point: string): void {
  if (process.env.CRUX_TEST_CRASH_AT === point) process.kill(process.pid, 'SIGKILL');
}
