// Writing to stdout and stderr with plain write(2) calls: touching process.stdout loads Node's stream machinery,
// which costs ~4 ms per invocation. Output that cannot be written (a closed pipe, a full device) never throws
// into a command: stdout stops, the reason is kept (stdoutFailure), and the top-level catch decides the exit —
// after a committed write it is still 0 (SPEC §3), the effect being durable.
import { writeSync } from 'node:fs';

const pause = new Int32Array(new SharedArrayBuffer(4));
let stdoutError: string | undefined;

/** Standard streams in memory: the program run in-process (test/helpers/run-cli.ts), not through fds 0, 1 and 2. */
export interface Stdio {
  stdout(bytes: Uint8Array): void;
  stderr(bytes: Uint8Array): void;
  /** All of standard input (a pipe already closed): never a terminal. */
  readonly stdin: Uint8Array;
}
let inMemory: Stdio | undefined;

/** Runs the program's output and input through `stdio` until called with undefined (tests only). */
export function redirectStdio(stdio: Stdio | undefined): void {
  inMemory = stdio;
  stdoutError = undefined;
}

/** The standard streams in memory, when redirectStdio set them. */
export const stdioInMemory = (): Stdio | undefined => inMemory;

export function writeStdout(text: string | Uint8Array): void {
  if (stdoutError !== undefined) return;
  stdoutError = writeFd(1, text);
}

export function writeStderr(text: string): void {
  // A stderr that cannot be written has nobody to tell.
  writeFd(2, text);
}

/** Why stdout could not be written (EPIPE, ENOSPC, EIO …), once it could not; undefined while it can. */
export const stdoutFailure = (): string | undefined => stdoutError;

/** Writes all of `text`; returns the error code that stopped it, if any. */
function writeFd(fd: number, text: string | Uint8Array): string | undefined {
  const buf = typeof text === 'string' ? Buffer.from(text) : text;
  if (inMemory !== undefined) {
    (fd === 1 ? inMemory.stdout : inMemory.stderr)(Buffer.from(buf));
    return undefined;
  }
  let offset = 0;
  while (offset < buf.length) {
    try {
      offset += writeSync(fd, buf, offset, buf.length - offset);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
      // A non-blocking pipe that is full: wait a moment for the reader.
      if (code === 'EAGAIN') Atomics.wait(pause, 0, 0, 2);
      else return code;
    }
  }
  return undefined;
}
