// A progress line on stderr for long journal work: only on a TTY, only once the work has proved long.
import type { ProgressSink } from '../journal/store-boundary';

/** The work must run this long, or cover this many records, before a line appears. */
export const PROGRESS_AFTER_MS = 1000;
export const PROGRESS_AFTER_RECORDS = 50_000;
const REDRAW_MS = 100;

export interface ProgressStream {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

export interface Progress {
  /** The callback to hand to DataDir.check/compact (or to call per imported line); undefined when silent. */
  readonly sink: ProgressSink | undefined;
  /** Erases the progress line, if one was drawn. */
  done(): void;
}

const SILENT: Progress = { sink: undefined, done: () => {} };

const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

/**
 * A reporter for `verb` (e.g. "checking"). Silent unless `stream` is a TTY, or when `quiet`/`json` output
 * is asked for by the caller. `clock` is injectable so that tests need not wait.
 */
export function startProgress(
  verb: string,
  opts: { stream?: ProgressStream; enabled?: boolean; clock?: () => number } = {},
): Progress {
  const stream = opts.stream ?? process.stderr;
  if (opts.enabled === false || stream.isTTY !== true) return SILENT;
  const clock = opts.clock ?? (() => performance.now());
  const started = clock();
  let records = 0;
  let file = '';
  let fileRecords = 0;
  let lastDraw = -Infinity;
  let drawn = false;
  const sink: ProgressSink = (current, doneBytes, totalBytes) => {
    records += 1;
    if (current !== file) [file, fileRecords] = [current, 0];
    fileRecords += 1;
    // Reading the clock per record would cost more than the record; look every 256 records.
    if ((records & 0xff) !== 0) return;
    const now = clock();
    if (!drawn && now - started < PROGRESS_AFTER_MS && records < PROGRESS_AFTER_RECORDS) return;
    if (now - lastDraw < REDRAW_MS) return;
    lastDraw = now;
    drawn = true;
    const pct = totalBytes > 0 ? ` ${Math.min(100, Math.floor((doneBytes / totalBytes) * 100))}%` : '';
    stream.write(`\r\x1b[Kcrux: ${verb} ${file}:${pct} ${mib(doneBytes)} of ${mib(totalBytes)}, ${fileRecords} records`);
  };
  return {
    sink,
    done: () => {
      if (drawn) stream.write('\r\x1b[K');
      drawn = false;
    },
  };
}
