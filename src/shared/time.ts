// Times and durations as crux reads and writes them: RFC 3339 in, UTC with milliseconds out.
import { invalid } from './errors';

/** Milliseconds since the epoch. Domain code receives it; it never reads the clock itself. */
export type Instant = number;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Parses an RFC 3339 time (any precision, any offset, e.g. the daemon's `…21:00:00.123456789+00:00`). */
export function parseTime(raw: string, what = 'time'): Instant {
  const written = asWritten(raw);
  if (written !== undefined) return written;
  const m = RFC3339.exec(raw.trim());
  if (!m) throw invalid(`${what} is not an RFC 3339 time: ${JSON.stringify(raw)}`, 'e.g. 2026-11-29T21:00:00Z');
  const [, y, mo, d, h, mi, s, frac, , sign, oh, om] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d);
  const hour = Number(h),
    minute = Number(mi),
    second = Number(s);
  const offsetOk = sign === undefined || (Number(oh) <= 23 && Number(om) <= 59);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 60 || !offsetOk) {
    throw invalid(`${what} is out of range: ${JSON.stringify(raw)}`);
  }
  const ms = frac === undefined ? 0 : Math.floor(Number(frac.padEnd(3, '0').slice(0, 3)));
  let t = daysFromCivil(year, month, day) * DAY_MS + ((hour * 60 + minute) * 60 + Math.min(second, 59)) * 1000 + ms;
  if (sign !== undefined) t -= (sign === '+' ? 1 : -1) * (Number(oh) * 60 + Number(om)) * 60_000;
  return t;
}

/**
 * A time as crux writes every one (formatTime: `2026-11-29T21:00:00.000Z`) read without the expression, or
 * undefined for any other spelling, and for a date or time out of range (parseTime's general path reads or
 * refuses those): a rebuild parses two of these a record.
 */
export function asWritten(raw: string): Instant | undefined {
  if (raw.length !== 24 || raw.charCodeAt(4) !== 45 || raw.charCodeAt(7) !== 45 || raw.charCodeAt(10) !== 84) return undefined;
  if (raw.charCodeAt(13) !== 58 || raw.charCodeAt(16) !== 58 || raw.charCodeAt(19) !== 46 || raw.charCodeAt(23) !== 90) return undefined;
  const year = digits(raw, 0, 4),
    month = digits(raw, 5, 2),
    day = digits(raw, 8, 2);
  const hour = digits(raw, 11, 2),
    minute = digits(raw, 14, 2),
    second = digits(raw, 17, 2),
    ms = digits(raw, 20, 3);
  // Any digit that is not one makes its field -1, and so out of range.
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour < 0 || hour > 23) return undefined;
  if (minute < 0 || minute > 59 || second < 0 || second > 59 || ms < 0) return undefined;
  return daysFromCivil(year, month, day) * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + ms;
}

/** The decimal number of raw[at, at + n), or -1 when one of those is not an ASCII digit. */
function digits(raw: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = raw.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

const DAY_MS = 86_400_000;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const daysInMonth = (year: number, month: number) => (month === 2 && isLeap(year) ? 29 : MONTH_DAYS[month - 1]!);

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar (as Date.UTC counts them, without its
 * two-digit-year rule and without a Date: a rebuild parses a million of these), month 1–12 (H. Hinnant's
 * days_from_civil).
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The last instant an RFC 3339 time can spell (a four-digit year). */
export const MAX_INSTANT: Instant = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** `now + ms` as an output time; refused (exit 5) past the year 9999, which RFC 3339 cannot write. */
export function formatLaterTime(now: Instant, ms: number, what: string): string {
  if (now + ms > MAX_INSTANT) throw invalid(`${what} reaches past the year 9999`, 'choose a shorter duration, or an earlier --now');
  return formatTime(now + ms);
}

/** Like parseTime, but for values read back from journals and packages: undefined instead of an error. */
export function tryParseTime(raw: unknown): Instant | undefined {
  if (typeof raw !== 'string') return undefined;
  try {
    return parseTime(raw);
  } catch {
    return undefined;
  }
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * `t` as RFC 3339 in UTC with milliseconds: what Date#toISOString writes, spelt from the getUTC* fields. A
 * process's first toISOString sets up ICU's time zone (reading /etc/localtime, ~0.25 ms), which every command
 * paid for the one time it writes; the UTC fields need no zone. Years outside 0000–9999 (and an invalid time,
 * which throws) are left to toISOString.
 */
export function formatTime(t: Instant): string {
  const d = new Date(t);
  const year = d.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return d.toISOString();
  const ms = d.getUTCMilliseconds();
  return `${String(year).padStart(4, '0')}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}T${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION = /^(?:\d+(?:ms|s|m|h|d|w))+$/;
const MAX_DURATION_MS = 100 * 365 * 86_400_000;

/** Parses `90s`, `15m`, `2h`, `7d` (and sums such as `1h30m`) into milliseconds. */
export function parseDuration(raw: string, what = 'duration'): number {
  const text = raw.trim();
  if (!DURATION.test(text)) {
    throw invalid(`${what} is not a duration: ${JSON.stringify(raw)}`, 'write it as 90s, 15m, 2h or 7d');
  }
  let total = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) total += Number(n) * UNIT_MS[unit!]!;
  if (!Number.isSafeInteger(total) || total > MAX_DURATION_MS) throw invalid(`${what} is too long: ${raw}`);
  return total;
}
