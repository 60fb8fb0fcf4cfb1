// Reading strace's output: one call per line, with a call that another thread interrupted joined up again.
//
// With -f, when a thread's traced call is still running as another thread's is printed, strace splits the first
// into `pwrite64(21, "…", 276, 0 <unfinished ...>` and, later, `<... pwrite64 resumed>) = 276`. Node's worker
// threads write to an eventfd to wake the main loop, so this happens at random: a parser that reads single
// lines loses the call now and then (the syscall-order test's "no journal write in the trace", once in two runs
// on Node 24). Joining the halves per pid is the fix.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { CRUX, testEnv, tempDir } from '../helpers/cli';
import { toolsSkipReason } from '../helpers/tools';

/** Why the strace suites are skipped here (no strace: they fail instead under CRUX_REQUIRE_TOOLS=1), or undefined. */
export const noStrace = toolsSkipReason('strace');

export interface Syscall {
  readonly pid: number;
  readonly name: string;
  /** The argument text, as strace prints it. */
  readonly args: string;
  readonly result: number;
  /** The whole call, for messages. */
  readonly text: string;
}

const UNFINISHED = ' <unfinished ...>';

export function parseStrace(output: string): Syscall[] {
  const pending = new Map<string, string>();
  const calls: Syscall[] = [];
  for (const line of output.split('\n')) {
    // strace pads the pid column: "6517  openat(…)" as well as "18749 openat(…)".
    const m = /^(\d+)\s+(.*)$/s.exec(line);
    if (!m) continue;
    const pid = m[1]!;
    let body = m[2]!;
    if (body.endsWith(UNFINISHED)) {
      pending.set(pid, body.slice(0, -UNFINISHED.length));
      continue;
    }
    const resumed = /^<\.\.\. (\w+) resumed>(.*)$/s.exec(body);
    if (resumed) {
      body = (pending.get(pid) ?? `${resumed[1]}(`) + resumed[2];
      pending.delete(pid);
    }
    const call = /^(\w+)\((.*)\)\s+=\s+(-?\d+)/s.exec(body);
    if (!call) continue;
    calls.push({ pid: Number(pid), name: call[1]!, args: call[2]!, result: Number(call[3]), text: body });
  }
  return calls;
}

/**
 * Runs crux under `strace -f` and returns its calls; the first traced call's pid is the main thread. The store is
 * `--data-dir dataDir`, or none of crux's own where dataDir is null (the line or `env` names it); a non-zero exit
 * throws unless `anyExit`.
 */
export function straceCrux(
  dataDir: string | null,
  args: string[],
  opts: { trace: string; extra?: string[]; input?: string; env?: Record<string, string>; anyExit?: boolean },
): { calls: Syscall[]; main: number } {
  const out = join(tempDir(), 'strace.txt');
  try {
    const store = dataDir === null ? [] : ['--data-dir', dataDir];
    execFileSync('strace', ['-f', '-qq', ...(opts.extra ?? []), '-e', `trace=${opts.trace}`, '-o', out, CRUX, ...store, ...args], {
      env: testEnv(opts.env),
      input: opts.input ?? '',
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 64 << 20,
    });
  } catch (error) {
    if (!(opts.anyExit && typeof (error as { status?: unknown }).status === 'number')) throw error;
  }
  const calls = parseStrace(fs.readFileSync(out, 'utf8'));
  return { calls, main: calls[0]?.pid ?? -1 };
}
