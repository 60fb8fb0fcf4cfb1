import { describe, expect, it } from 'vitest';
import { CruxError } from '../../../src/shared/errors';
import { formatLaterTime, formatTime, MAX_INSTANT, parseTime } from '../../../src/shared/time';

describe('parseTime', () => {
  it('reads the years 0000–0099 as written, not as 1900–1999 (Date.UTC’s two-digit rule)', () => {
    expect(formatTime(parseTime('0050-01-01T00:00:00Z'))).toBe('0050-01-01T00:00:00.000Z');
    expect(formatTime(parseTime('0099-12-31T23:59:59+01:00'))).toBe('0099-12-31T22:59:59.000Z');
    expect(formatTime(parseTime('0000-02-29T00:00:00Z'))).toBe('0000-02-29T00:00:00.000Z'); // year 0 is a leap year
  });

  it('still knows the length of each month, leap years included', () => {
    expect(formatTime(parseTime('2024-02-29T12:00:00Z'))).toBe('2024-02-29T12:00:00.000Z');
    expect(() => parseTime('2023-02-29T12:00:00Z')).toThrow(CruxError);
    expect(() => parseTime('1900-02-29T12:00:00Z')).toThrow(CruxError);
    expect(formatTime(parseTime('9999-12-31T23:59:59.999Z'))).toBe('9999-12-31T23:59:59.999Z');
  });
});

describe('formatLaterTime', () => {
  it('refuses (exit 5) a time RFC 3339 cannot write', () => {
    expect(formatLaterTime(MAX_INSTANT - 1000, 1000, '--ttl')).toBe('9999-12-31T23:59:59.999Z');
    let error: unknown;
    try {
      formatLaterTime(MAX_INSTANT - 1000, 1001, '--ttl');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CruxError);
    expect((error as CruxError).exitCode).toBe(5);
  });
});

describe('formatTime', () => {
  it('writes what Date#toISOString writes, over the years 0000–9999, the epoch’s edges and every millisecond width', () => {
    let seed = 7;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const start = new Date(0).setUTCFullYear(0, 0, 1); // 0000-01-01 (Date.UTC would read 0 as 1900)
    const times = [0, -1, 1, 9, 10, 99, 100, 999, start, start - 1, MAX_INSTANT, Date.UTC(2024, 1, 29, 23, 59, 59, 5)];
    for (let i = 0; i < 20_000; i++) times.push(Math.floor(start + next() * (MAX_INSTANT - start)));
    for (const t of times) expect(formatTime(t), String(t)).toBe(new Date(t).toISOString());
  });

  it('leaves years past 9999 and before 0000 to toISOString, and refuses an invalid time as it does', () => {
    for (const t of [MAX_INSTANT + 1, new Date(0).setUTCFullYear(-1, 11, 31), 8.64e15, -8.64e15]) expect(formatTime(t)).toBe(new Date(t).toISOString());
    expect(() => formatTime(Number.NaN)).toThrow(RangeError);
    expect(() => formatTime(8.64e15 + 1)).toThrow(RangeError);
  });
});
