// The writers' lock: one per data directory, held by the kernel so that a killed holder frees it at once.
//
// A process holds the lock by listening on an abstract Unix socket named after the data directory's device
// and inode. Binding a taken name fails with EADDRINUSE; the kernel releases the name when the holder's
// socket closes, which includes exit, a crash and SIGKILL. No stale lock is left behind and no waiter has
// to guess whether a holder is alive. (Abstract sockets are Linux-only; see lockPlatformSupported.)
//
// The socket is bound through Node's pipe binding when it is available: synchronous, and without loading
// node:net and its streams, which costs ~7 ms per write. Otherwise node:net binds the same name.
// A plain require: esbuild wraps a namespace import in a per-module copy of every fs export.
const fs = require('node:fs') as typeof import('node:fs');
import { CruxError } from '../shared/errors';
import { holdLockForTest, traceLock } from './crash-point';

export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;

export interface HeldLock {
  release(): Promise<void>;
}

export const lockPlatformSupported = (): boolean => process.platform === 'linux';

/** The socket name of a data directory's lock (also shown by `crux doctor`). */
export function lockName(dataDir: string): string {
  const st = fs.statSync(dataDir, { bigint: true });
  return `\0crux-lock:${st.dev}:${st.ino}`;
}

/** A bound socket: the lock is held until it is closed. */
interface Binding {
  close(): Promise<void>;
}

interface PipeHandle {
  bind(name: string): number;
  unref(): void;
  close(callback: () => void): void;
}

const EADDRINUSE = -98;

function pipeBinding(): (new () => PipeHandle) | undefined {
  try {
    const binding = (process as unknown as { binding(name: string): any }).binding('pipe_wrap');
    const { Pipe, constants } = binding;
    return class {
      constructor() {
        return new Pipe(constants.SERVER);
      }
    } as unknown as new () => PipeHandle;
  } catch {
    return undefined;
  }
}

let PipeClass: (new () => PipeHandle) | undefined | null = null;

async function tryBind(name: string): Promise<Binding | undefined> {
  if (PipeClass === null) PipeClass = pipeBinding();
  if (PipeClass !== undefined) {
    const handle = new PipeClass();
    const status = handle.bind(name);
    if (status === 0) {
      handle.unref();
      return { close: () => new Promise<void>((resolve) => handle.close(resolve)) };
    }
    handle.close(() => {});
    if (status === EADDRINUSE) return undefined;
    throw new Error(`cannot bind the lock socket (error ${status})`);
  }
  // node:net is loaded only by writers, so readers never pay for it (a bundled require, not import()).
  const { createServer } = require('node:net') as typeof import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(undefined);
      else reject(error);
    });
    server.listen({ path: name, exclusive: true }, () => {
      server.unref();
      resolve({ close: () => new Promise<void>((done) => server.close(() => done())) });
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Takes the lock of `dataDir`, waiting at most `timeoutMs`; then fails with exit 75 (safe to retry). */
export async function acquireLock(dataDir: string, timeoutMs = DEFAULT_LOCK_TIMEOUT_MS): Promise<HeldLock> {
  if (!lockPlatformSupported()) {
    throw new CruxError('internal', `the writers' lock needs Linux abstract sockets; ${process.platform} is not supported yet`);
  }
  const name = lockName(dataDir);
  const deadline = Date.now() + timeoutMs;
  let delay = 1;
  for (;;) {
    const binding = await tryBind(name);
    if (binding !== undefined) {
      traceLock('enter');
      await holdLockForTest();
      return {
        release: () => {
          traceLock('exit');
          return binding.close();
        },
      };
    }
    if (Date.now() >= deadline) {
      throw new CruxError(
        'lock_timeout',
        `the data directory is locked by another crux process (waited ${Math.round(timeoutMs / 1000)} s): ${dataDir}`,
        'safe to retry; raise CRUX_LOCK_TIMEOUT to wait longer',
      );
    }
    // Jittered exponential back-off, capped, so that many waiters do not retry in lock-step.
    await sleep(Math.min(delay * (0.5 + Math.random()), Math.max(1, deadline - Date.now())));
    delay = Math.min(delay * 2, 25);
  }
}
