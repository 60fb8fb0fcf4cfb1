// Progress for `session import` and `case import`: one line on stderr (TTY only) from the first byte read to
// the batch written, fitted to the terminal.
import { startImportProgress } from '../output/progress';
import type { Context } from './context';

type OnLine = (doneBytes: number, totalBytes: number) => void;

/** Runs `work` with a per-line callback (undefined when silent); the line is erased before the result is shown. */
export async function withImportProgress<T>(ctx: Context, file: string | undefined, work: (onLine: OnLine | undefined) => Promise<T>): Promise<T> {
  const source = file === undefined || file === '-' ? 'standard input' : file;
  const progress = startImportProgress(source, { enabled: !ctx.quiet, env: ctx.env });
  const stop = ctx.onWork(progress.onWork);
  try {
    return await work(progress.onLine);
  } finally {
    stop();
    progress.done();
  }
}
