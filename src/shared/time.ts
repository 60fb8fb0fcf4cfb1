// Times and durations as crux reads and writes them: RFC 3339 in, UTC with milliseconds out.
import { invalid } from './errors';

/** Milliseconds since the epoch. Domain code receives it; it never reads the clock itself. */
export type Instant = number;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Parses an RFC 3339 time (any precision, any offset, e.g. the daemon's `…21:00:00.123456789+00:00`). */
export function parseTime(raw: string, what = 'time'): Instant {
  const m = RFC3339.exec(raw.trim());
  if (!m) throw invalid(`${what} is not an RFC 3339 time: ${JSON.stringify(raw)}`, 'e.g. 2026-11-29T21:00:00Z');
  const [, y, mo, d, h, mi, s, frac, , sign, oh, om] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d);
  const hour = Number(h),
    minute = Number(mi),
    second = Number(s);
  const daysInMonth = new Date(utc(year, month, 0)).getUTCDate();
  const offsetOk = sign === undefined || (Number(oh) <= 23 && Number(om) <= 59);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 60 || !offsetOk) {
    throw invalid(`${what} is out of range: ${JSON.stringify(raw)}`);
  }
  const ms = frac === undefined ? 0 : Math.floor(Number(frac.padEnd(3, '0').slice(0, 3)));
  let t = utc(year, month - 1, day, hour, minute, Math.min(second, 59), ms);
  if (sign !== undefined) t -= (sign === '+' ? 1 : -1) * (Number(oh) * 60 + Number(om)) * 60_000;
  return t;
}

/** Date.UTC without its two-digit-year rule (which reads the years 0000–0099 as 1900–1999). */
function utc(year: number, monthIndex: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): Instant {
  const d = new Date(0);
  d.setUTCFullYear(year, monthIndex, day);
  d.setUTCHours(hour, minute, second, ms);
  return d.getTime();
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
