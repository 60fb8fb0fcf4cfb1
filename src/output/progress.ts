// A progress line on stderr for long journal work: only on a TTY, only once the work has proved long, and
// never wider than the terminal (a wrapped line would leave junk behind each redraw).
import type { ProgressSink } from '../journal/core/store-boundary';
import type { WorkPhase } from '../journal/dir/load';
import { cutToWidth, displayWidth } from './text-width';
import { columnsOf } from './terminal';

/** The work must run this long, or cover this many records, before a line appears. */
export const PROGRESS_AFTER_MS = 1000;
export const PROGRESS_AFTER_RECORDS = 50_000;
const REDRAW_MS = 100;

export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

export interface Progress {
  /** The callback to hand to DataDir.check/compact (or to call per imported line); undefined when silent. */
  readonly sink: ProgressSink | undefined;
  /** Erases the progress line, if one was drawn. */
  done(): void;
}

interface Options {
  stream?: ProgressStream;
  enabled?: boolean;
  clock?: () => number;
  env?: NodeJS.ProcessEnv;
}

const SILENT: Progress = { sink: undefined, done: () => {} };

const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
const percent = (fraction: number) => `${Math.min(100, Math.floor(fraction * 100))}%`;

/** One redrawn line: appears once the work has proved long, redrawn at most every REDRAW_MS, cut to the width. */
function line(opts: Options) {
  const stream = opts.stream ?? process.stderr;
  const clock = opts.clock ?? (() => performance.now());
  const started = clock();
  let lastDraw = -Infinity;
  let drawn = false;
  // One column spare: writing the last column makes some terminals wrap at once.
  const columns = () => Math.max(10, (columnsOf(opts.env ?? process.env, stream.columns) ?? 80) - 1);
  return {
    /** Draws `text` (made for a width) if the work is long by now (or `records` says it will be) and the last draw is old enough. */
    draw(text: (width: number) => string, records: number, force = false): void {
      const now = clock();
      if (!drawn && !force && now - started < PROGRESS_AFTER_MS && records < PROGRESS_AFTER_RECORDS) return;
      if (!force && now - lastDraw < REDRAW_MS) return;
      lastDraw = now;
      drawn = true;
      const width = columns();
      stream.write(`\r\x1b[K${cutToWidth(text(width), width)}`);
    },
    get drawn() {
      return drawn;
    },
    erase(): void {
      if (drawn) stream.write('\r\x1b[K');
      drawn = false;
    },
  };
}

const silent = (opts: Options) => opts.enabled === false || (opts.stream ?? process.stderr).isTTY !== true;

/**
 * A reporter for `verb` (e.g. "checking"). Silent unless `stream` is a TTY, or when `quiet`/`json` output
 * is asked for by the caller. `clock` is injectable so that tests need not wait.
 */
export function startProgress(verb: string, opts: Options = {}): Progress {
  if (silent(opts)) return SILENT;
  const out = line(opts);
  let records = 0;
  let file = '';
  let fileRecords = 0;
  const sink: ProgressSink = (current, doneBytes, totalBytes) => {
    records += 1;
    if (current !== file) [file, fileRecords] = [current, 0];
    fileRecords += 1;
    // Reading the clock per record would cost more than the record; look every 256 records.
    if ((records & 0xff) !== 0) return;
    const pct = totalBytes > 0 ? ` ${percent(doneBytes / totalBytes)}` : '';
    out.draw(() => `crux: ${verb} ${file}:${pct} ${mib(doneBytes)} of ${mib(totalBytes)}, ${fileRecords} records`, records);
  };
  return { sink, done: () => out.erase() };
}

/** The phases of an import and their share of its time (measured: 100k cases, Node 20). */
const IMPORT_PHASES: readonly { name: 'reading' | WorkPhase; weight: number }[] = [
  { name: 'reading', weight: 0.25 },
  { name: 'encoding', weight: 0.15 },
  { name: 'applying', weight: 0.45 },
  { name: 'writing', weight: 0.15 },
];

export interface ImportProgress {
  /** Bytes of the input read and parsed so far; undefined when silent. */
  readonly onLine: ((doneBytes: number, totalBytes: number) => void) | undefined;
  /** The write after parsing: encoding, applying and writing the batch. */
  readonly onWork: ((phase: WorkPhase, done: number, total: number) => void) | undefined;
  /** Shows 100%, then erases the line (if one was drawn). */
  done(): void;
}

/** One line for a whole import, from the first byte read to the batch written: 0 to 100%, never frozen. */
export function startImportProgress(source: string, opts: Options = {}): ImportProgress {
  if (silent(opts)) return { onLine: undefined, onWork: undefined, done: () => {} };
  const out = line(opts);
  let lines = 0;
  const overall = (phase: string, fraction: number) => {
    let before = 0;
    for (const p of IMPORT_PHASES) {
      if (p.name === phase) return before + p.weight * Math.min(1, Math.max(0, fraction));
      before += p.weight;
    }
    return before;
  };
  // A long path gives way (its start cut) so the percentage and the phase stay on the line.
  const show = (phase: string, fraction: number, detail: string) => (width: number) => {
    const pct = percent(overall(phase, fraction));
    // On a narrow terminal the counts go first, then the phase; the percentage stays.
    const fits = (text: string) => width - 'crux: importing '.length - displayWidth(text) >= 12;
    const rest = [`: ${pct} ${detail}`, `: ${pct} ${detail.split(' ')[0]}`].find(fits) ?? `: ${pct}`;
    const room = width - 'crux: importing '.length - displayWidth(rest);
    const name = displayWidth(source) <= room || room < 2 ? source : `…${[...source].slice(-(room - 1)).join('')}`;
    return `crux: importing ${name}${rest}`;
  };
  return {
    onLine: (doneBytes, totalBytes) => {
      lines += 1;
      if ((lines & 0xff) !== 0) return;
      out.draw(show('reading', totalBytes > 0 ? doneBytes / totalBytes : 0, `reading ${mib(doneBytes)} of ${mib(totalBytes)}, ${lines} records`), lines);
    },
    onWork: (phase, done, total) => {
      const detail = phase === 'writing' ? 'writing the journal' : `${phase} ${done} of ${total} records`;
      out.draw(show(phase, total > 0 ? done / total : 0, detail), lines);
    },
    done: () => {
      if (out.drawn) out.draw(show('writing', 1, 'done'), lines, true);
      out.erase();
    },
  };
}
