// Calls that touch the same thing are answered in the order received (SPEC §10.1): a session_get sent right
// after a session_put of that session sees the put. Calls on different things still run at once — a read of
// one session never waits behind a write of another that is waiting for the lock — so the order is kept per
// key (a session, the case bank, the handoff ledger), and a call that touches everything (a listing, a check,
// an accept whose session is named inside the package) waits for every call before it and holds back every
// call after it. Only calls not yet finished are remembered: memory does not grow with the calls answered.

import type { Touches } from './tool';

export class CallOrder {
  /** The last call on each key that has not finished. */
  private readonly last = new Map<string, Promise<void>>();
  /** The last call that touches everything, until it finishes. */
  private barrier: Promise<void> | undefined;

  /** Runs `call` once every earlier call it must follow has finished (whatever their outcome). */
  run<T>(touches: Touches, call: () => Promise<T>): Promise<T> {
    const before = touches === 'everything' ? [...this.last.values()] : touches.map((k) => this.last.get(k)).filter((p) => p !== undefined);
    if (this.barrier !== undefined) before.push(this.barrier);
    const result = (before.length === 0 ? Promise.resolve() : Promise.all(before)).then(call);
    const done = result.then(
      () => undefined,
      () => undefined,
    );
    if (touches === 'everything') {
      // Every later call waits for this one, and this one for every earlier one: the keys need not be kept.
      this.last.clear();
      this.barrier = done;
      void done.then(() => {
        if (this.barrier === done) this.barrier = undefined;
      });
    } else {
      for (const key of touches) this.last.set(key, done);
      void done.then(() => {
        for (const key of touches) if (this.last.get(key) === done) this.last.delete(key);
      });
    }
    return result;
  }
}
