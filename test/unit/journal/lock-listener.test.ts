// A contender listens through Node's pipe binding where it may, and through node:net where process.binding is
// refused (the permission model; lock-socket.ts): either way a waiter sleeps on the holder, wakes at its release
// and takes the lock, a second waiter sleeps on the first, and no socket or holder file outlives a release.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../../helpers/cli';

const realBinding = (process as unknown as { binding(name: string): unknown }).binding;
afterEach(() => {
  (process as unknown as { binding: unknown }).binding = realBinding;
});

/** The lock module afresh (its binding is looked up once per process), with process.binding as `binding`. */
async function lockWith(binding: (name: string) => unknown) {
  (process as unknown as { binding: unknown }).binding = binding;
  vi.resetModules();
  return import('../../../src/journal/dir/lock/lock');
}

const lockFiles = (root: string) => fs.readdirSync(join(root, '.lock')).filter((n) => !/^g\.\d+$/.test(n));
const settled = async (p: Promise<unknown>) => Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), 300))]);

/** A binding unlike the one crux knows (it is internal to Node): its bind answers no error number. */
function strangeBinding(name: string) {
  const real = realBinding.call(process, name) as { Pipe: new (type: number) => { bind(...a: unknown[]): number }; constants: object };
  class Pipe extends real.Pipe {
    override bind(...args: unknown[]): number {
      super.bind(...args);
      return undefined as unknown as number;
    }
  }
  return { ...real, Pipe };
}

const refused = () => {
  throw Object.assign(new Error('Access to this API has been restricted'), { code: 'ERR_ACCESS_DENIED' });
};

describe.each([
  ['the pipe binding', (name: string) => realBinding.call(process, name)],
  ['node:net (process.binding refused)', refused],
  ['node:net (a pipe binding it does not know, which bound the socket)', strangeBinding],
] as const)('the lock, listening through %s', (_, binding) => {
  it('wakes its waiters in turn at each release, and leaves only the last generation', async () => {
    const asked: string[] = [];
    const { acquireLock } = await lockWith((name) => {
      asked.push(name);
      return binding(name);
    });
    const root = tempDir();
    const first = await acquireLock(root, 10_000);
    expect(asked).toEqual(['pipe_wrap']);
    // The holder's socket and holder file, both private.
    const mine = lockFiles(root);
    expect(mine.map((n) => n[0]).sort()).toEqual(['i', 's']);
    expect(fs.statSync(join(root, '.lock', mine.find((n) => n.startsWith('s.'))!)).isSocket()).toBe(true);

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
    // The binding was asked for once, by the first contender of the module.
    expect(asked).toEqual(['pipe_wrap']);
  });
});
