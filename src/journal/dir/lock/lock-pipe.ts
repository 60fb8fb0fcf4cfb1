// The lock's Unix sockets through Node's own pipe binding (pipe_wrap, what node:net's servers and sockets are built
// on): a contender's listening socket and a waiter's probe of it, without node:net and its streams (~3 ms each,
// loaded on every write and every wait). Each answers undefined where the binding is not the one crux knows, and
// lock-socket.ts then does the same with node:net. Also what both ways share: the probe's answer, the connection a
// waiter sleeps on, and the connections lingered to the process's exit.
import type { SocketAddress } from './lock-fs';
import { nodeBinding } from './node-binding';

/** A probe's connection to a live contender, to sleep on: the contender's end closes it when it stops contending. */
export interface Wake {
  /** Whether the other end has closed it. */
  readonly ended: boolean;
  /** Calls `done` once, when the other end closes it (the caller checks `ended` first). */
  onEnd(done: () => void): void;
  /** Leaves it to the process's exit (unref'd), or to its next contention (a long-lived process: crux mcp). */
  linger(): void;
}

export type ProbeAnswer = { answer: 'alive'; conn?: Wake } | { answer: 'gone' | 'refused' };

/** What a failed connect means: ENOENT gone, ECONNREFUSED refused (dead, where that proves it), else alive (busy). */
export function answerTo(code: string | undefined): ProbeAnswer {
  return code === 'ENOENT' ? { answer: 'gone' } : code === 'ECONNREFUSED' ? { answer: 'refused' } : { answer: 'alive' };
}

/** A contender's listening socket and the waiters' connections it accepted (their probes, never read). */
export interface Listener {
  /** Stops listening: libuv unlinks the socket by the name it was bound to, so call it where that name resolves. */
  stop(): void;
  /** Ends the waiters' connections, which wakes them. */
  endConnections(): void;
}

// Connections this process is done with, closed at its next contention, not at once: node:net's Socket#destroy
// makes Node create process.stderr (its _destroy compares the socket with it), 1.6 M instructions where stderr is a
// file and 4.4 M where it is a pipe, which a one-shot command never needs; its exit closes them. They are unref'd,
// half-open (allowHalfOpen on both ends, so that no end-of-stream destroys them either) and hold no lock.
const lingering = new Set<{ close(): void }>();

/** Leaves `conn` to the process's exit, or to this process's next contention. */
export function lingerUntilNext(conn: { close(): void }): void {
  lingering.add(conn);
}

/** Closes the connections earlier contentions of this process lingered. */
export function destroyLingering(): void {
  for (const conn of lingering) conn.close();
  lingering.clear();
}

/** What Node's pipe binding (pipe_wrap) gives: the Unix-socket handle node:net's servers and sockets are built on. */
interface PipeHandle {
  bind(path: string, port: number): number;
  listen(backlog: number): number;
  onconnection: ((status: number, client: PipeHandle | undefined) => void) | null;
  connect(req: ConnectRequest, path: string): number;
  readStart(): number;
  readStop(): number;
  onread: (() => void) | null;
  close(): void;
  unref(): void;
}
interface ConnectRequest {
  oncomplete: ((status: number) => void) | null;
}
export interface PipeBinding {
  readonly Pipe: new (type: number) => PipeHandle;
  readonly PipeConnectWrap?: new () => ConnectRequest;
  readonly constants: { readonly SERVER: number; readonly SOCKET?: number };
}

let pipeBinding: PipeBinding | null | undefined;
/** Node's pipe binding, or undefined where it may not be had: node:net is then used, the same socket listened on the same way. */
export function pipes(): PipeBinding | undefined {
  if (pipeBinding === undefined) {
    const binding = nodeBinding('pipe_wrap') as Partial<PipeBinding> | undefined;
    pipeBinding = typeof binding?.Pipe === 'function' && typeof binding.constants?.SERVER === 'number' ? (binding as PipeBinding) : null;
  }
  return pipeBinding ?? undefined;
}

/** An error as node:net's listen gives it, from a libuv error number. */
function listenError(errno: number, path: string): NodeJS.ErrnoException {
  const code = (require('node:util') as typeof import('node:util')).getSystemErrorName(errno);
  return Object.assign(new Error(`listen ${code}: ${path}`), { errno, code, syscall: 'listen', address: path });
}

/**
 * listen(2) through the binding, synchronously: ~12 M instructions (~3 ms) less than node:net's server on every
 * write, which loads node:net and its streams for it. Accepted connections are kept, unread and unref'd, and
 * closed at release (a close, not node:net's end: there is no stream here to destroy, see `lingering`).
 * Undefined when the binding is not the one crux knows (it is internal to Node: a constructor that throws, an
 * answer that is not an error number): nothing is left bound, and this process uses node:net from then on.
 */
export function listenDirect(binding: PipeBinding, address: SocketAddress, socket: string): Listener | undefined {
  let handle: PipeHandle | undefined;
  let refused: NodeJS.ErrnoException | undefined;
  try {
    const made = (handle = new binding.Pipe(binding.constants.SERVER));
    address.at(socket, (path) => {
      // bind(2) and listen(2) happen here, synchronously, where the name resolves.
      let errno = made.bind(path, -1);
      if (errno === 0) errno = made.listen(511);
      if (typeof errno !== 'number') throw new TypeError('the pipe binding answered no error number');
      // Refused for a reason of the file system (EACCES, ENOSPC): the error node:net would give.
      if (errno !== 0) refused = listenError(errno, path);
    });
  } catch {
    pipeBinding = null;
  }
  if (refused !== undefined || pipeBinding === null) {
    // Closing unlinks what a bind made (libuv), where the name resolves: node:net may then bind it afresh.
    if (handle !== undefined) address.at(socket, () => handle!.close());
    if (refused !== undefined) throw refused;
    return undefined;
  }
  const listening = handle!;
  const conns = new Set<PipeHandle>();
  listening.onconnection = (status, client) => {
    if (status !== 0 || client === undefined) return;
    client.unref();
    conns.add(client);
  };
  listening.unref();
  return {
    stop: () => listening.close(),
    endConnections: () => {
      for (const conn of conns) conn.close();
      conns.clear();
    },
  };
}

/**
 * connect(2) through the binding: a waiter's probe without node:net. The holder never writes to a waiter, so the
 * first read callback is the end of the connection (its release or its death); the waiter then wakes. Undefined when
 * the binding is not the one crux knows (nothing is left open): node:net then probes, the same way.
 */
export function probeDirect(binding: PipeBinding, address: SocketAddress, socket: string): Promise<ProbeAnswer> | undefined {
  if (typeof binding.PipeConnectWrap !== 'function' || typeof binding.constants.SOCKET !== 'number') return undefined;
  let handle: PipeHandle;
  let req: ConnectRequest;
  try {
    handle = new binding.Pipe(binding.constants.SOCKET);
    req = new binding.PipeConnectWrap();
  } catch {
    return undefined;
  }
  let resolve: (answer: ProbeAnswer) => void = () => {};
  const answered = new Promise<ProbeAnswer>((settle) => {
    resolve = settle;
  });
  req.oncomplete = (status: number) => {
    if (status !== 0) {
      handle.close();
      resolve(answerTo(errorName(status)));
      return;
    }
    let ended = false;
    let waiting: (() => void) | undefined;
    handle.onread = () => {
      if (ended) return;
      ended = true;
      handle.readStop();
      waiting?.();
    };
    if (handle.readStart() !== 0) ended = true;
    resolve({
      answer: 'alive',
      conn: {
        get ended() {
          return ended;
        },
        onEnd: (done) => {
          waiting = done;
        },
        linger: () => {
          handle.unref();
          lingerUntilNext(handle);
        },
      },
    });
  };
  let errno: unknown;
  try {
    // The connect(2) happens here, synchronously, where the name resolves; its answer comes by oncomplete.
    address.at(socket, (path) => {
      errno = handle.connect(req, path);
    });
  } catch {
    // A binding unlike the one crux knows (or a name that cannot be reached): node:net tries the same, and says why.
    handle.close();
    return undefined;
  }
  if (typeof errno !== 'number') {
    handle.close();
    return undefined;
  }
  if (errno !== 0) {
    handle.close();
    resolve(answerTo(errorName(errno)));
  }
  return answered;
}

/** A libuv error number's name (ENOENT, ECONNREFUSED), as node:net's errors carry it. */
const errorName = (errno: number): string | undefined => {
  try {
    return (require('node:util') as typeof import('node:util')).getSystemErrorName(errno);
  } catch {
    return undefined;
  }
};
