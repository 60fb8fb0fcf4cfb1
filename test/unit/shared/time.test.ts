import fc from 'fast-check';
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

  it('counts every day as Date does, over the years 0000–9999 (arithmetic, no Date per call)', () => {
    const viaDate = (y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number) => {
      const t = new Date(0);
      t.setUTCFullYear(y, mo - 1, d);
      t.setUTCHours(h, mi, s, ms);
      return t.getTime();
    };
    const p = (n: number, w: number) => String(n).padStart(w, '0');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 31 }),
        fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 999 })),
        (y, mo, d, [h, mi, s, ms]) => {
          const raw = `${p(y, 4)}-${p(mo, 2)}-${p(d, 2)}T${p(h, 2)}:${p(mi, 2)}:${p(s, 2)}.${p(ms, 3)}Z`;
          const t = viaDate(y, mo, d, h, mi, s, ms);
          // A day past its month's end rolls over in Date; parseTime refuses it.
          if (new Date(t).getUTCDate() !== d) expect(() => parseTime(raw)).toThrow(CruxError);
          else expect(parseTime(raw)).toBe(t);
        },
      ),
      { numRuns: 20_000 },
    );
    // Written as crux writes times, or in any other spelling of the same instant: one answer.
    fc.assert(
      fc.property(fc.integer({ min: -62_167_219_200_000 /* 0000-01-01T00:00:00Z */, max: MAX_INSTANT }), (t) => {
        const written = formatTime(t);
        expect(parseTime(written)).toBe(t);
        expect(parseTime(` ${written.replace('T', 't').replace('Z', '+00:00')}`)).toBe(t);
      }),
      { numRuns: 5_000 },
    );
    // Near misses of the written form go the general way: refused, or read as RFC 3339 reads them.
    for (const bad of [
      '2026-13-01T00:00:00.000Z',
      '2026-02-30T00:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '2026-01-01T00:60:00.000Z',
      '2026-0a-01T00:00:00.000Z',
      '2026-01-01T00:00:0-.000Z',
      '2026-01-01T00:00:00.00xZ',
      '2026-01-01T00:00:00.000z0',
    ])
      expect(() => parseTime(bad)).toThrow(CruxError);
    expect(parseTime('2026-01-01T00:00:60.000Z')).toBe(Date.UTC(2026, 0, 1, 0, 0, 59)); // a leap second, as before
    expect(parseTime('2026-01-01T00:00:00.000z')).toBe(Date.UTC(2026, 0, 1));
    for (const day of ['0000-03-01', '0001-01-01', '1600-02-29', '1969-12-31', '1970-01-01', '2000-02-29', '2100-03-01', '9999-12-31'])
      expect(parseTime(`${day}T00:00:00Z`)).toBe(viaDate(...(day.split('-').map(Number) as [number, number, number]), 0, 0, 0, 0));
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
