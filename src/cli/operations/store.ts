// `crux store init`: the store made ready ahead of its first write (store-boundary.ts, JournalStore.init).
import type { Context } from '../context';
import type { InitReport } from '../../journal/core/store-boundary';

export function initStore(ctx: Context, print: boolean): Promise<InitReport> {
  return ctx.dataDir.init({ print });
}
