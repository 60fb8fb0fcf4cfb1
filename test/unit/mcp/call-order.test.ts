// The order of calls (src/cli/mcp/call-order.ts): per key in the order received, everything-calls as barriers,
// other keys at once, and nothing remembered once the calls have finished.
import { describe, expect, it } from 'vitest';
import { CallOrder } from '../../../src/cli/mcp/call-order';

/** A call that finishes when told to, logging its start and end. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    open,
    run: async () => {
      log.push(`${name}+`);
      await opened;
      log.push(`${name}-`);
      return name;
    },
  };
}
const turns = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('CallOrder', () => {
  it('runs calls on one key one after another, in the order received; other keys at once', async () => {
    const order = new CallOrder();
    const log: string[] = [];
    const [a1, a2, b1] = [gate(log, 'a1'), gate(log, 'a2'), gate(log, 'b1')];
    const results = [order.run(['session:a'], a1.run), order.run(['session:a'], a2.run), order.run(['session:b'], b1.run)];
    await turns();
    expect(log).toEqual(['a1+', 'b1+']);
    b1.open();
    await turns();
    expect(log).toEqual(['a1+', 'b1+', 'b1-']);
    a1.open();
    await turns();
    expect(log).toEqual(['a1+', 'b1+', 'b1-', 'a1-', 'a2+']);
    a2.open();
    expect(await Promise.all(results)).toEqual(['a1', 'a2', 'b1']);
  });

  it('a call on everything waits for every call before it and holds back every call after it', async () => {
    const order = new CallOrder();
    const log: string[] = [];
    const [a, all, b] = [gate(log, 'a'), gate(log, 'all'), gate(log, 'b')];
    const done = [order.run(['session:a'], a.run), order.run('everything', all.run), order.run(['session:b'], b.run)];
    await turns();
    expect(log).toEqual(['a+']);
    a.open();
    await turns();
    expect(log).toEqual(['a+', 'a-', 'all+']);
    all.open();
    await turns();
    expect(log).toEqual(['a+', 'a-', 'all+', 'all-', 'b+']);
    b.open();
    await Promise.all(done);
  });

  it('a refused call does not stop the ones after it, and rejects only its own caller', async () => {
    const order = new CallOrder();
    const failed = order.run(['cases'], async () => {
      throw new Error('refused');
    });
    const next = order.run(['cases'], async () => 'next');
    await expect(failed).rejects.toThrow('refused');
    expect(await next).toBe('next');
  });

  it('keeps nothing once every call has finished', async () => {
    const order = new CallOrder();
    await Promise.all(Array.from({ length: 100 }, (_, i) => order.run(i % 10 === 0 ? 'everything' : [`session:${i}`, 'handoffs'], async () => i)));
    await turns();
    const state = order as unknown as { last: Map<string, unknown>; barrier: unknown };
    expect(state.last.size).toBe(0);
    expect(state.barrier).toBeUndefined();
  });
});
