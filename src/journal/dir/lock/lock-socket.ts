// A contender's proof of life for the writers' lock (see lock.ts): a listening Unix socket in the lock
// directory, which accepts while its process lives and refuses (ECONNREFUSED) once it has died, and the probe
// that tells which, both on node:net. node:net is required on first use: readers never load it.
import { fs } from '../../../shared/fs';
import { dirname, join } from 'node:path';
import { givenKey } from '../../codec/cipher';
import type { Server, Socket } from 'node:net';
import { scrubText } from '../../../shared/scrub';
import { formatTime } from '../../../shared/time';
import type { SocketAddress } from './lock-fs';
import { hostname, ownerOf, unlinkQuiet, type HolderFile } from './lock-files';
import { crashPoint } from '../../../shared/crash-point';
import { noteStreamsLoaded } from '../../../shared/node-streams';

type Net = typeof import('node:net');
let net: Net | undefined;
// A bundled require, not import(): loaded by a writer's first contention, never by readers.
const loadNet = (): Net => {
  if (net === undefined) {
    net = require('node:net') as Net;
    noteStreamsLoaded();
  }
  return net;
};

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
function answerTo(code: string | undefined): ProbeAnswer {
  return code === 'ENOENT' ? { answer: 'gone' } : code === 'ECONNREFUSED' ? { answer: 'refused' } : { answer: 'alive' };
}

/** A contender's listening socket and the waiters' connections it accepted (their probes, never read). */
interface Listener {
  /** Stops listening: libuv unlinks the socket by the name it was bound to, so call it where that name resolves. */
  stop(): void;
  /** Ends the waiters' connections, which wakes them. */
  endConnections(): void;
}

// Connections this process is done with, closed at its next contention, not at once: node:net's Socket#destroy
// makes Node create process.stderr (its _destroy compares the socket with it), 1.6 M instructions where stderr is a
// file and 4.4 M where it is a pipe, which a one-shot command never needs; its exit closes them. They are unref'd,
// half-open (allowHalfOpen on both ends, so that no end-of-stream destroys them either) and hold no lock.
const lingering = new Set<Socket>();

/** Leaves a connection to the process's exit, or to its next contention. */
function lingerSocket(conn: Socket): void {
  if (conn.destroyed) return;
  conn.unref();
  lingering.add(conn);
}

/** Closes the connections earlier contentions of this process lingered. */
export function destroyLingering(): void {
  for (const conn of lingering) conn.destroy();
  lingering.clear();
}

/**
 * Connects to a socket of the lock directory: alive (connected, or busy), or proved gone (ENOENT) or dead
 * (ECONNREFUSED). A connection reset before its connect is reported (ECONNRESET: connect(2) queued it in a listener
 * that closed before the next turn, as at a death or a release) is asked once more, never taken for a busy socket.
 */
export function probe(address: SocketAddress, socket: string, again = true): Promise<ProbeAnswer> {
  // A socket that is not there is gone, as a connect would find (ENOENT): the common case, the last holder having
  // released, is answered by one lstat instead of a connection attempt and a turn of the event loop.
  if (address.at(socket, (path) => fs.lstatSync(path, { throwIfNoEntry: false })) === undefined) return Promise.resolve({ answer: 'gone' });
  return new Promise((resolve) => {
    // The connect(2) happens inside net.connect, synchronously: the address is resolved before `at` returns.
    const conn = address.at(socket, (path) => loadNet().connect({ path, allowHalfOpen: true }));
    conn.on('error', () => {});
    conn.once('connect', () => {
      // Flowing, so that the holder's end of the connection (its release or death) ends ours.
      conn.resume();
      resolve({
        answer: 'alive',
        conn: {
          get ended() {
            return conn.destroyed || conn.readableEnded;
          },
          onEnd: (done) => {
            let called = false;
            const once = () => {
              if (!called) (called = true), done();
            };
            conn.once('end', once);
            conn.once('close', once);
          },
          linger: () => lingerSocket(conn),
        },
      });
    });
    conn.once('error', (error: NodeJS.ErrnoException) => {
      conn.destroy();
      resolve(error.code === 'ECONNRESET' && again ? probe(address, socket, false) : answerTo(error.code));
    });
  });
}

/**
 * listen(2) with node:net. Server#listen loads the cluster module (and child_process with it, ~0.8 ms) to ask
 * whether this is a cluster worker; `_listen2`, which Node keeps under that name for code that wraps it, is
 * what it then calls for a primary, so it is called directly where it exists.
 */
async function listen(address: SocketAddress, socket: string): Promise<Listener> {
  const conns = new Set<Socket>();
  // Never read: a waiter says nothing, and an end of stream read here would destroy the connection (see
  // lingering above) once this end is ended too.
  const server = loadNet().createServer({ allowHalfOpen: true, pauseOnConnect: true }, (conn) => {
    // A waiter's probe: kept open (and ended at close, or closed by the kernel when this process ends) so that
    // the waiter wakes then.
    conn.unref();
    conn.on('error', () => {});
    conns.add(conn);
    conn.once('close', () => conns.delete(conn));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', resolve);
    // bind(2) and listen(2) happen here, synchronously.
    address.at(socket, (path) => {
      const direct = (server as Server & { _listen2?: (address: string, port: number, addressType: number, backlog: number) => void })._listen2;
      if (typeof direct === 'function') direct.call(server, path, -1, -1, 511);
      else server.listen(path);
    });
  });
  server.on('error', () => {});
  server.unref();
  return {
    stop: () => server.close(),
    endConnections: () => {
      if (conns.size === 0) return;
      const ending = [...conns];
      conns.clear();
      // Ended (a FIN), not destroyed: see lingering above. On the event loop's next turn, as libuv would send the
      // FIN anyway (its shutdown(2) waits for a turn): a one-shot command exits before (process.exit), and the
      // kernel's close of its descriptors wakes the waiters as the FIN would, without node:stream's end run for a
      // FIN that never leaves the process. Unref'd: it keeps no process alive.
      setImmediate(() => {
        for (const conn of ending) {
          conn.end();
          lingerSocket(conn);
        }
      }).unref();
    },
  };
}

/** Thrown by Contender.open when a sweeper claimed this contender's files (it saw them as a dead writer's). */
export class Swept extends Error {}

/** A contender: its listening socket and holder file, from before it links a generation until it releases. */
export class Contender {
  // Unique among the contenders of one pid (the pid itself tells processes apart); node:crypto is not needed.
  readonly id = `${process.pid}.${Math.floor(Math.random() * 2 ** 48)
    .toString(16)
    .padStart(12, '0')}`;
  readonly socket = `s.${this.id}`;
  readonly info = `i.${this.id}`;
  private listener: Listener | undefined;
  /** Whether the holder file holds the holder's name (not so on a full disk). */
  private named = false;
  /** Whether the holder file is this contender's own (not a sweeper's claim). */
  private ownsInfo = false;
  /** Its ticket in the waiters' queue (q.<t>.<id>, lock-queue.ts) while it waits in it. */
  ticket: string | undefined;

  constructor(
    readonly dir: string,
    readonly address: SocketAddress,
  ) {}

  async open(): Promise<void> {
    this.listener = await listen(this.address, this.socket);
    crashPoint('lock:listening');
    // Private like every file crux makes (0600); a root writer in a user's data directory gives its files to
    // the directory's owner, so that the owner's writers can connect, read and clean up.
    const socketPath = join(this.dir, this.socket);
    const owner = ownerOf(this.dir);
    try {
      fs.chmodSync(socketPath, 0o600);
      if (owner !== undefined) fs.chownSync(socketPath, owner.uid, owner.gid);
    } catch (error) {
      // Removed already: a sweeper found it refusing (between bind and listen) and took it for a dead writer's.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Swept();
      throw error;
    }
    const holder: HolderFile = { pid: process.pid, command: commandLine(this.dir), host: hostname(), since: formatTime(Date.now()), socket: this.socket };
    let fd: number;
    try {
      fd = fs.openSync(join(this.dir, this.info), 'wx', 0o600);
    } catch (error) {
      // A sweeper took this socket, still without its holder file, for a dead writer's (see sweep): start over.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new Swept();
      throw error;
    }
    this.ownsInfo = true;
    try {
      if (owner !== undefined) fs.fchownSync(fd, owner.uid, owner.gid);
      fs.writeSync(fd, `${JSON.stringify(holder)}\n`);
      this.named = true;
    } catch (error) {
      // A full disk has no room for the holder's name: the file stays empty, and is found by its inode.
      if (!['ENOSPC', 'EDQUOT', 'EFBIG'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    } finally {
      fs.closeSync(fd);
    }
    crashPoint('lock:named');
    // A sweeper that found this socket refusing (between bind and listen) removed it before this holder file
    // could be made: probers would find no socket and take it for a release. Start over with a new one.
    if (fs.lstatSync(socketPath, { throwIfNoEntry: false }) === undefined) throw new Swept();
  }

  /** Leaves the waiters' queue: on taking the lock (the queue holds waiters only), and on closing. */
  leaveQueue(dir = this.dir): void {
    if (this.ticket !== undefined) unlinkQuiet(join(dir, this.ticket));
    this.ticket = undefined;
  }

  /**
   * `held`: this contender holds the highest generation; an empty holder file stays (the next holder removes
   * it), so that the generation can still be traced to its socket by inode. `movedTo`: the lock
   * directory was renamed there (a dropped directory); clean up in it.
   */
  close(opts: { held?: boolean; movedTo?: string } = {}): void {
    const { movedTo } = opts;
    this.leaveQueue(movedTo);
    // Closing the server unlinks its socket by the name it was bound to (libuv), so close where that name resolves.
    const listener = this.listener;
    this.listener = undefined;
    if (listener !== undefined) {
      if (movedTo === undefined) this.address.at(this.socket, () => listener.stop());
      else listener.stop();
    }
    unlinkQuiet(join(movedTo ?? this.dir, this.socket));
    if (this.ownsInfo && (!opts.held || this.named)) unlinkQuiet(join(movedTo ?? this.dir, this.info));
    // The waiters' connections end last, which wakes them: each then finds the socket gone (a release), not one
    // still listening that it would sleep on again until this process exits.
    listener?.endConnections();
    this.address.close();
  }
}

/**
 * The command line a holder file names: scrubbed of credentials, short. On an encrypted store (or given a key) its
 * arguments may be free text that must not lie in plaintext (SPEC §13): only the option names are kept.
 */
function commandLine(lockDir: string): string {
  const args = process.argv.slice(2);
  const sealed = givenKey() !== undefined || fs.existsSync(join(dirname(lockDir), 'keys', 'store-key.json'));
  const text = [
    'crux',
    ...(sealed ? [...args.filter((a) => a.startsWith('-')).map((a) => a.split('=')[0]!), '(arguments withheld: encrypted store)'] : args),
  ].join(' ');
  return scrubText(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}
