// What `session import` and `case import` share: reading their input (a file, or - / nothing for stdin, at most
// CRUX_MAX_IMPORT_BYTES), and progress — one line on stderr (TTY only) from the first byte read to the batch
// written, fitted to the terminal.
import { startImportProgress } from '../output/progress';
import { readInputFile, readStdin, type Context } from './context';
import { envCount } from './parse';

/** The import's bytes: `file`, or standard input for - or none; larger than CRUX_MAX_IMPORT_BYTES (else `defaultMax`) is refused. */
export function readImportInput(ctx: Context, file: string | undefined, defaultMax: number): Buffer {
  const max = envCount(ctx.env, 'CRUX_MAX_IMPORT_BYTES', defaultMax)!;
  return file === undefined || file === '-' ? readStdin(max, 'standard input (the import)') : readInputFile(file, max);
}

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
