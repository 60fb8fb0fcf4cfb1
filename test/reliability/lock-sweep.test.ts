// The sweep of dead contenders' lock files (src/journal/dir/lock/lock-sweep.ts), in-process: a live contender's socket is
// kept even without its holder file, a dead one's files go, a few per call, and a contender whose holder file a
// sweeper claimed starts over instead of holding with a removed socket.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli';
import { fs as cruxFs } from '../../src/shared/fs';
import { socketAddress } from '../../src/journal/dir/lock/lock-fs';
import { ahead, joinQueue } from '../../src/journal/dir/lock/lock-queue';
import { Contender, destroyLingering, Swept } from '../../src/journal/dir/lock/lock-socket';
import { sweep, SWEEP_PER_WRITE } from '../../src/journal/dir/lock/lock-sweep';

const servers: net.Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

const id = (n: number) => `${900000 + n}.${n.toString(16).padStart(12, '0')}`;
const names = (dir: string) => fs.readdirSync(dir).sort();

/** A socket in `dir` whose process was killed: it stays on disk and refuses every connection. */
async function deadSocket(dir: string, name: string): Promise<void> {
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(join(dir, name))}, () => console.log('up'))`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function liveSocket(dir: string, name: string): Promise<void> {
  const server = net.createServer((c) => c.destroy());
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(join(dir, name), resolve));
}

describe('sweeping what dead contenders left', () => {
  it("keeps a live contender's socket that has no holder file yet, and leaves no claim behind", async () => {
    const dir = tempDir();
    await liveSocket(dir, `s.${id(1)}`);
    const address = socketAddress(dir);
    await sweep(dir, address, names(dir), new Set(), 0);
    address.close();
    expect(names(dir)).toEqual([`s.${id(1)}`]);
  });

  it('removes dead sockets with or without holder files, at most SWEEP_PER_WRITE writers per call', async () => {
    const dir = tempDir();
    for (let n = 0; n < 6; n++) {
      await deadSocket(dir, `s.${id(n)}`);
      if (n % 2 === 0) fs.writeFileSync(join(dir, `i.${id(n)}`), '{}');
    }
    // A holder file whose socket is gone entirely (killed while closing).
    fs.writeFileSync(join(dir, `i.${id(7)}`), '{}');
    const address = socketAddress(dir);
    const ids = () => new Set(names(dir).map((n) => n.slice(2))).size;
    expect(ids()).toBe(7);
    await sweep(dir, address, names(dir), new Set(), 0);
    expect(ids()).toBe(7 - SWEEP_PER_WRITE);
    await sweep(dir, address, names(dir), new Set(), 1);
    address.close();
    expect(names(dir)).toEqual([]);
  });

  it('never looks at the excluded (its own) files', async () => {
    const dir = tempDir();
    await deadSocket(dir, `s.${id(1)}`);
    const address = socketAddress(dir);
    await sweep(dir, address, names(dir), new Set([id(1)]), 0);
    address.close();
    expect(names(dir)).toEqual([`s.${id(1)}`]);
  });

  it("passes over queued contenders, never waking a live waiter; a dead one's files go once the queue removed its ticket", async () => {
    const dir = tempDir();
    // A live waiter (its socket counts the connections it accepts) and a dead one, each with its holder file and
    // its ticket in the queue (lock-queue.ts).
    let accepted = 0;
    const server = net.createServer((c) => {
      accepted++;
      c.destroy();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(join(dir, `s.${id(1)}`), resolve));
    await deadSocket(dir, `s.${id(2)}`);
    for (const n of [1, 2]) {
      fs.writeFileSync(join(dir, `i.${id(n)}`), '{}');
      fs.linkSync(join(dir, `i.${id(n)}`), join(dir, `q.${n}.${id(n)}`));
    }
    const queued = names(dir);
    const address = socketAddress(dir);
    // A barrier, not a sleep: a unix socket accepts in order and the waiter closes each connection it accepts, so
    // once our own connection is closed every connection made before it has been accepted (and counted).
    let ours = 0;
    const acceptedSoFar = async () => {
      ours++;
      const c = net.connect(join(dir, `s.${id(1)}`));
      c.on('error', () => {});
      await new Promise((resolve) => c.on('close', resolve));
      return accepted - ours;
    };
    await sweep(dir, address, names(dir), new Set(), 0);
    expect(await acceptedSoFar()).toBe(0);
    expect(names(dir)).toEqual(queued);
    // The next writer queues behind both: it passes the dead one (removing its ticket) and sleeps on the live one.
    const next = new Contender(dir, socketAddress(dir));
    await next.open();
    joinQueue(next, names(dir));
    const sleptOn = await ahead(next, names(dir), true);
    expect(sleptOn?.pid).toBe(900001);
    sleptOn?.conn.linger();
    next.close();
    expect(await acceptedSoFar()).toBe(1);
    expect(names(dir)).toEqual([`i.${id(1)}`, `i.${id(2)}`, `q.1.${id(1)}`, `s.${id(1)}`, `s.${id(2)}`]);
    // Unqueued now, the dead one's socket and holder file go with the next sweep; the live waiter's stay, unprobed.
    await sweep(dir, address, names(dir), new Set(), 0);
    expect(await acceptedSoFar()).toBe(1);
    address.close();
    destroyLingering();
    expect(names(dir)).toEqual([`i.${id(1)}`, `q.1.${id(1)}`, `s.${id(1)}`]);
  });

  it('a contender whose holder file a sweeper claimed starts over: open() fails with Swept, and its socket goes', async () => {
    const dir = tempDir();
    const contender = new Contender(dir, socketAddress(dir));
    // The sweeper's claim: the holder file's name, made exclusively before the contender could make it.
    fs.writeFileSync(join(dir, contender.info), '');
    await expect(contender.open()).rejects.toBeInstanceOf(Swept);
    contender.close();
    // The claim is the sweeper's to remove; the contender's socket is gone.
    expect(names(dir)).toEqual([contender.info]);
  });

  it('a contender whose socket was swept before its holder file was made starts over', async () => {
    const dir = tempDir();
    const contender = new Contender(dir, socketAddress(dir));
    // A sweeper that found the socket refusing (between bind and listen) removed it, and its claim, just before
    // the contender makes its holder file (fs patched as the fault-injection tests do).
    const openSync = cruxFs.openSync;
    const patched = ((path: fs.PathLike, ...rest: never[]) => {
      if (String(path) === join(dir, contender.info)) fs.rmSync(join(dir, contender.socket));
      return (openSync as (...a: unknown[]) => number)(path, ...rest);
    }) as typeof fs.openSync;
    cruxFs.openSync = patched;
    try {
      await expect(contender.open()).rejects.toBeInstanceOf(Swept);
    } finally {
      cruxFs.openSync = openSync;
    }
    contender.close();
    expect(names(dir)).toEqual([]);
  });
});
