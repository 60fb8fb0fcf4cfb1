// The waiters' queue of the writers' lock (see lock.ts): whom a waiter sleeps on, so that a release wakes one
// waiter instead of all of them.
//
//   q.<t>.<id>  contender <id> waits with ticket t (a hard link to its holder file; only the name is read).
// A waiter sleeps on a connection to the nearest live contender ahead of it (a lower ticket, ties broken by
// id), and judges the highest generation itself only when none is ahead. The queue is a schedule of wake-ups,
// not part of the exclusion: whoever is woken still links a generation only after proving the one below
// released or its holder dead, as every writer does. Nothing here can let two hold at once; at worst a wrong
// queue wakes more waiters than one.
import { fs } from '../../../shared/fs';
import { join } from 'node:path';
import { unlinkQuiet } from './lock-files';
import { probe, type Contender } from './lock-socket';
import type { Wake } from './lock-socket';

const TICKET = /^q\.(\d+)\.(\d+\.[0-9a-f]+)$/;

interface Ticket {
  readonly n: number;
  readonly id: string;
  readonly name: string;
}

function ticketsIn(names: readonly string[]): Ticket[] {
  const found: Ticket[] = [];
  for (const name of names) {
    const m = TICKET.exec(name);
    if (m) found.push({ n: Number(m[1]), id: m[2]!, name });
  }
  return found;
}

const before = (a: Ticket, b: Ticket) => a.n < b.n || (a.n === b.n && a.id < b.id);

/** The contenders a listing of the lock directory shows queued (their ids). */
export const queuedIds = (names: readonly string[]) => new Set(ticketsIn(names).map((t) => t.id));

/** Whether a listing of the lock directory shows waiters queued (a newcomer then queues behind them). */
export const hasQueue = (names: readonly string[]) => names.some((name) => name.startsWith('q.'));

/**
 * Queues `me` behind every ticket in `names`, once. Where no ticket can be made (a full disk has no room for
 * the name), it waits unqueued, on the holder, as every waiter did before the queue.
 */
export function joinQueue(me: Contender, names: readonly string[]): void {
  if (me.ticket !== undefined) return;
  const n = 1 + ticketsIn(names).reduce((max, t) => Math.max(max, t.n), 0);
  const name = `q.${n}.${me.id}`;
  try {
    fs.linkSync(join(me.dir, me.info), join(me.dir, name));
    me.ticket = name;
  } catch {
    // Unqueued: it still wakes when the holder leaves, with the other unqueued waiters.
  }
}

/**
 * A connection to the nearest live contender ahead of `me` (and that one's pid), to sleep on until that one stops contending (it
 * took the lock and released it, gave up, or died: the kernel closes the connection in each case); undefined
 * when none is ahead. Tickets whose contender proves gone or dead are removed on the way (only where a
 * refusal proves a death: on an untrusted filesystem they are passed over).
 */
export async function ahead(me: Contender, names: readonly string[], trusted: boolean): Promise<{ conn: Wake; pid: number } | undefined> {
  const mine = me.ticket === undefined ? undefined : ticketsIn([me.ticket])[0];
  if (mine === undefined) return undefined;
  const front = ticketsIn(names)
    .filter((t) => before(t, mine))
    .sort((a, b) => (before(a, b) ? 1 : -1));
  for (const t of front) {
    const seen = await probe(me.address, `s.${t.id}`);
    if (seen.answer === 'alive') {
      // A busy socket (its backlog full) gives no connection to sleep on: the next one ahead is tried.
      if (seen.conn !== undefined) return { conn: seen.conn, pid: Number(t.id.split('.')[0]) };
    } else if (seen.answer === 'gone' || trusted) {
      unlinkQuiet(join(me.dir, t.name));
    }
  }
  return undefined;
}
