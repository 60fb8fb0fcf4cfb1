// A contender listens, and a waiter probes, through node:net alone (lock-socket.ts): a waiter sleeps on the holder,
// wakes at its release and takes the lock, a second waiter sleeps on the first, no socket or holder file outlives
// a release, and nothing reaches for Node's internal bindings (process.binding throws here, and is never called).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../../helpers/cli';

const realBinding = (process as unknown as { binding: unknown }).binding;
afterEach(() => {
  (process as unknown as { binding: unknown }).binding = realBinding;
});

const lockFiles = (root: string) => fs.readdirSync(join(root, '.lock')).filter((n) => !/^g\.\d+$/.test(n));
const settled = async (p: Promise<unknown>) => Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), 300))]);

describe('the lock, on node:net', () => {
  it('wakes its waiters in turn at each release, and leaves only the last generation', async () => {
    const asked: string[] = [];
    (process as unknown as { binding: unknown }).binding = (name: string) => {
      asked.push(name);
      throw Object.assign(new Error('Access to this API has been restricted'), { code: 'ERR_ACCESS_DENIED' });
    };
    vi.resetModules();
    const { acquireLock } = await import('../../../src/journal/dir/lock/lock');
    const root = tempDir();
    const first = await acquireLock(root, 10_000);
    // node:net, loaded for the socket, is told to the checksums (derived/checksum.ts: node:zlib is cheap past it).
    expect((await import('../../../src/shared/node-streams')).streamsLoaded()).toBe(true);
    // The holder's socket and holder file, both private.
    const mine = lockFiles(root);
    expect(mine.map((n) => n[0]).sort()).toEqual(['i', 's']);
    const socket = join(root, '.lock', mine.find((n) => n.startsWith('s.'))!);
    expect(fs.statSync(socket).isSocket()).toBe(true);
    expect(fs.statSync(socket).mode & 0o777).toBe(0o600);

    const second = acquireLock(root, 10_000);
    expect(await settled(second)).toBe(false);
    const third = acquireLock(root, 10_000);
    expect(await settled(third)).toBe(false);
    await first.release();
    const held2 = await second;
    expect(held2.generation).toBeGreaterThan(first.generation);
    expect(await settled(third)).toBe(false);
    await held2.release();
    const held3 = await third;
    expect(held3.generation).toBeGreaterThan(held2.generation);
    await held3.release();
    expect(lockFiles(root)).toEqual([]);
    expect(asked).toEqual([]);
  });
});
