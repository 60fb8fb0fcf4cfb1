// Progress for `session import` and `case import`: one line on stderr (TTY only) while a large import runs.
import { startProgress } from '../output/progress';
import type { Context } from './context';

type OnLine = (doneBytes: number, totalBytes: number) => void;

/** Runs `work` with a per-line callback (undefined when silent); the line is erased before the result is shown. */
export async function withImportProgress<T>(ctx: Context, file: string | undefined, work: (onLine: OnLine | undefined) => Promise<T>): Promise<T> {
  const progress = startProgress('importing', { enabled: !ctx.quiet });
  const sink = progress.sink;
  const source = file === undefined || file === '-' ? 'standard input' : file;
  try {
    return await work(sink && ((doneBytes, totalBytes) => sink(source, doneBytes, totalBytes)));
  } finally {
    progress.done();
  }
}
