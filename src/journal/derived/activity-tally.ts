// The activity tally: a journal's lines counted per hour and series (cache/<journal>.activity), so that the ui's
// activity chart costs the hours it shows, not the records in them. A body file (cache-file.ts: checksummed header
// and body) bound to the journal's head like every derived file; behind the journal, it is continued from its bound
// position (the journal's tail only) and written anew; a file that does not verify, names another journal or another
// rule is rebuilt from the whole journal. It never changes an answer: the caller's backward read stops at the first
// line (from the end) older than the window less a slack, so a line written that far out of time order hides every
// line before it. The tally keeps, for each such line, the window starts it would make the tally differ at (`drops`),
// and says so (undefined): the caller then reads backwards as it always did.
//
// Which line counts for which series is the caller's rule (`classify`, named by `rule`): the tally only counts.
import { fs } from '../../shared/fs';
import { join } from 'node:path';
import { bindingHolds, type JournalBinding, mtimeOf, readBodyFile, readVerified, writeBodyFile } from './cache-file';

const HOUR = 3_600_000;
const KIND = 'activity-tally';
const VERSION = 1;
/** At most this many windows of disorder are kept apart; more are merged (a wider window only reads backwards). */
const MAX_DROPS = 64;
const MAX_BODY = 64 << 20;

/** How a line counts: its time (NaN: none) and its series' index (-1: none). */
export interface ActivityRule {
  readonly id: string;
  readonly series: number;
  readonly slackMs: number;
  readonly classify: (line: string) => { ts: number; series: number };
}

interface Tally {
  /** Per hour (ms since the epoch / HOUR), a count per series. */
  hours: Map<number, number[]>;
  /** The highest time of any line so far (null: none yet). */
  max: number | null;
  /** Window starts [lo, hi] at which the backward read stops before lines the tally counts. */
  drops: [number, number][];
  lines: number;
}

interface Header {
  kind: string;
  v: number;
  rule: string;
  slack: number;
  file: string;
  binding: JournalBinding;
}

const activityName = (file: string) => `${file}.activity`;

/** Counts of `line` into `t`: the shared step of a build, a continuation and the unbound tail. */
function countLine(t: Tally, rule: ActivityRule, line: string): void {
  const { ts, series } = rule.classify(line);
  t.lines += 1;
  if (Number.isNaN(ts)) return;
  if (t.max !== null && ts + rule.slackMs < t.max) addDrop(t.drops, [ts + rule.slackMs, t.max]);
  if (t.max === null || ts > t.max) t.max = ts;
  if (series < 0) return;
  const h = Math.floor(ts / HOUR);
  let row = t.hours.get(h);
  if (row === undefined) {
    row = new Array(rule.series).fill(0);
    t.hours.set(h, row);
  }
  row[series]! += 1;
}

function addDrop(drops: [number, number][], d: [number, number]): void {
  drops.push(d);
  drops.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const x of drops) {
    const last = merged[merged.length - 1];
    if (last !== undefined && x[0] <= last[1]) last[1] = Math.max(last[1], x[1]);
    else merged.push([x[0], x[1]]);
  }
  while (merged.length > MAX_DROPS) {
    let at = 0;
    for (let i = 1; i < merged.length - 1; i++) if (merged[i + 1]![0] - merged[i]![1] < merged[at + 1]![0] - merged[at]![1]) at = i;
    merged.splice(at, 2, [merged[at]![0], merged[at + 1]![1]]);
  }
  drops.splice(0, drops.length, ...merged);
}

/**
 * The lines of the journal open at `fd` from byte `from` to its end, each given to `each` with the offset just past
 * it (its newline; the end of the file for a last line without one). Empty lines are skipped, as the backward read does.
 */
function linesForward(fd: number, from: number, size: number, each: (line: string, end: number, whole: boolean) => void): void {
  const block = Buffer.allocUnsafe(1 << 20);
  let carry: Buffer = Buffer.alloc(0);
  let at = from;
  while (at < size) {
    const n = fs.readSync(fd, block, 0, Math.min(block.length, size - at), at);
    if (n <= 0) break;
    const bytes = carry.length > 0 ? Buffer.concat([carry, block.subarray(0, n)]) : block.subarray(0, n);
    const base = at - carry.length;
    let start = 0;
    let nl = bytes.indexOf(10, start);
    while (nl !== -1) {
      if (nl > start) each(bytes.toString('utf8', start, nl), base + nl + 1, true);
      start = nl + 1;
      nl = bytes.indexOf(10, start);
    }
    carry = Buffer.from(bytes.subarray(start));
    at += n;
  }
  if (carry.length > 0) each(carry.toString('utf8'), size, false);
}

function encode(t: Tally): Buffer {
  const hours = [...t.hours].sort((a, b) => a[0] - b[0]);
  return Buffer.from(JSON.stringify({ hours, max: t.max, drops: t.drops, lines: t.lines }));
}

function decode(body: Buffer, series: number): Tally | undefined {
  try {
    const o = JSON.parse(body.toString('utf8')) as { hours: [number, number[]][]; max: number | null; drops: [number, number][]; lines: number };
    const ok =
      Array.isArray(o.hours) &&
      o.hours.every(
        (h) =>
          Array.isArray(h) &&
          Number.isSafeInteger(h[0]) &&
          Array.isArray(h[1]) &&
          h[1].length === series &&
          h[1].every((n) => Number.isSafeInteger(n) && n >= 0),
      ) &&
      (o.max === null || Number.isFinite(o.max)) &&
      Array.isArray(o.drops) &&
      o.drops.every((d) => Array.isArray(d) && d.length === 2 && Number.isFinite(d[0]) && Number.isFinite(d[1])) &&
      Number.isSafeInteger(o.lines);
    return ok ? { hours: new Map(o.hours), max: o.max, drops: o.drops, lines: o.lines } : undefined;
  } catch {
    return undefined;
  }
}

/** The binding of the journal open at `fd` through `size` (the end of a whole line), if its last line verifies. */
function bindingThrough(fd: number, size: number, lines: number, lastStart: number): JournalBinding | undefined {
  if (size === 0) return { size: 0, lines: 0, seq: 0, h: '', head_offset: 0, head_length: 0, mtime_ns: mtimeOf(fd) };
  const head = readVerified(fd, { offset: lastStart, length: size - 1 - lastStart });
  if (head === undefined) return undefined;
  return { size, lines, seq: head.seq, h: head.h, head_offset: lastStart, head_length: size - 1 - lastStart, mtime_ns: mtimeOf(fd) };
}

/**
 * Counts per hour (`first` to `first + hours` hours) and series of the lines of `file` in the data directory `root`,
 * through its tally (continued, rebuilt and written back as needed); undefined when the tally cannot give the backward
 * read's answer for this window (a line far out of time order) or the journal cannot be read: read backwards then.
 * `stats.read` is the journal bytes read.
 */
export function activityCounts(
  root: string,
  file: string,
  rule: ActivityRule,
  first: number,
  hours: number,
  stats: { read: number } = { read: 0 },
): number[][] | undefined {
  const name = activityName(file);
  let fd: number;
  try {
    fd = fs.openSync(join(root, file), 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const stored = readBodyFile<Header>(
      root,
      name,
      (h) =>
        h.kind === KIND &&
        h.v === VERSION &&
        h.rule === rule.id &&
        h.slack === rule.slackMs &&
        h.file === file &&
        bindingHolds(fd, size, h.binding, { prefix: true }),
      () => 0,
      MAX_BODY,
    );
    const known = stored === undefined ? undefined : decode(stored.body, rule.series);
    const t: Tally = known ?? { hours: new Map(), max: null, drops: [], lines: 0 };
    const from = known === undefined ? 0 : stored!.header.binding.size;
    // Whole lines past the bound position go into the tally written back; a last line without its newline (a torn
    // tail, or a write under way) is counted for this answer only.
    let wholeEnd = from;
    let lastStart = known === undefined ? 0 : stored!.header.binding.head_offset;
    let torn: string | undefined;
    linesForward(fd, from, size, (line, end, whole) => {
      stats.read += Buffer.byteLength(line) + (whole ? 1 : 0);
      if (!whole) {
        torn = line;
        return;
      }
      countLine(t, rule, line);
      lastStart = end - 1 - Buffer.byteLength(line);
      wholeEnd = end;
    });
    if (wholeEnd > from || known === undefined) {
      const binding = bindingThrough(fd, wholeEnd, t.lines, lastStart);
      if (binding !== undefined) writeBodyFile(root, name, { kind: KIND, v: VERSION, rule: rule.id, slack: rule.slackMs, file, binding }, encode(t));
    }
    if (torn !== undefined) countLine(t, rule, torn);
    if (t.drops.some(([lo, hi]) => first > lo && first <= hi)) return undefined;
    const h0 = first / HOUR;
    return Array.from({ length: hours }, (_, i) => t.hours.get(h0 + i) ?? new Array(rule.series).fill(0));
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}
