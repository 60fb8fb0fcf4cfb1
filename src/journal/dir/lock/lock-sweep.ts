// The sweep of what dead contenders left in the lock directory (their sockets and holder files), a few per write.
import { fs } from '../../../shared/fs';
import { join } from 'node:path';
import type { SocketAddress } from './lock-fs';
import { CONTENDER_ID, unlinkQuiet } from './lock-files';
import { queuedIds } from './lock-queue';
import { probe } from './lock-socket';

/** How many other contenders' leftovers one write looks at: a kill -9'd writer's files go within a few writes. */
export const SWEEP_PER_WRITE = 4;
/** How many other contenders' files a holder that had to wait leaves alone (see sweep). */
const SWEEP_WHEN_CONTENDED_AT = 32;

/**
 * Removes what dead contenders left (their socket, their holder file), looking at `SWEEP_PER_WRITE` of them per
 * write, in turns (`turn`: the generation) so that live waiters, which are kept, do not hide the dead ones.
 * A contender's files are removed only when its socket refuses or is gone, and then only under a claim: for a
 * socket without a holder file (killed between listen() and writing it, or a live one about to write it), the
 * sweeper first creates that holder file exclusively itself, so that the live contender's own exclusive
 * create fails and it starts over (lock-socket.ts), instead of linking a generation to a removed socket.
 * Only on a trusted filesystem: elsewhere a refusal proves nothing.
 */
export async function sweep(
  dir: string,
  address: SocketAddress,
  names: readonly string[],
  exclude: ReadonlySet<string>,
  turn: number,
  contended = false,
): Promise<void> {
  // A contender with a ticket waits in the queue (lock-queue.ts): alive, nearly always, and probing it would wake
  // it for nothing (an accepted connection in its process, a connect in this one). It is passed over: a queued
  // contender that died is found by the next writer, which queues behind every ticket and removes the dead ones'
  // as it probes them (lock-queue.ts's ahead); its socket and holder file, unqueued then, are swept as any.
  const queued = queuedIds(names);
  const ids = new Set<string>();
  for (const name of names) {
    const id = name.slice(2);
    if ((name.startsWith('i.') || name.startsWith('s.')) && CONTENDER_ID.test(id) && !exclude.has(id) && !queued.has(id)) ids.add(id);
  }
  // A holder that waited has live waiters behind it, whose files these mostly are: probing them costs every
  // one of those processes a wake-up. It sweeps only once the files pile up; the next write that did not wait
  // sweeps in any case.
  if (contended && ids.size < SWEEP_WHEN_CONTENDED_AT) return;
  const all = [...ids].sort();
  const count = Math.min(SWEEP_PER_WRITE, all.length);
  for (let k = 0; k < count; k++) {
    const id = all[(turn * SWEEP_PER_WRITE + k) % all.length]!;
    const gone = await sweepOne(dir, address, id, names.includes(`i.${id}`));
    // Its ticket in the waiters' queue (lock-queue.ts), when it was killed while waiting.
    if (gone) for (const name of names) if (name.startsWith('q.') && name.endsWith(`.${id}`)) unlinkQuiet(join(dir, name));
  }
}

/** Removes contender `id`'s socket and holder file when it proves gone or dead; true when it did. */
async function sweepOne(dir: string, address: SocketAddress, id: string, hasHolderFile: boolean): Promise<boolean> {
  const info = join(dir, `i.${id}`);
  let claimed = false;
  if (!hasHolderFile) {
    try {
      fs.closeSync(fs.openSync(info, 'wx', 0o600));
      claimed = true;
    } catch {
      return false; // Its holder file appeared meanwhile: a live contender, or another sweeper's claim.
    }
  }
  const seen = await probe(address, `s.${id}`);
  if (seen.answer === 'alive') {
    seen.conn?.linger();
    if (claimed) unlinkQuiet(info);
    return false;
  }
  unlinkQuiet(join(dir, `s.${id}`));
  unlinkQuiet(info);
  return true;
}
