// Sizes and times as people read them in a terminal table.
import { describe, expect, it } from 'vitest';
import { humanBytes, relativeTime } from '../../../src/output/humanize';
import { columnsOf, layoutFor, wantsColor } from '../../../src/output/terminal';

describe('humanBytes', () => {
  it('uses decimal units with one decimal', () => {
    expect(humanBytes(0)).toBe('0 B');
    expect(humanBytes(999)).toBe('999 B');
    expect(humanBytes(1000)).toBe('1.0 kB');
    expect(humanBytes(45_800_000)).toBe('45.8 MB');
    expect(humanBytes(999_999_999)).toBe('1.0 GB');
  });
});

describe('relativeTime', () => {
  const now = Date.parse('2026-12-01T12:00:00.000Z');
  it('says how long ago, or how long from now', () => {
    expect(relativeTime('2026-12-01T12:00:00.000Z', now)).toBe('now');
    expect(relativeTime('2026-12-01T11:59:48.000Z', now)).toBe('12s ago');
    expect(relativeTime('2026-12-01T11:55:00.000Z', now)).toBe('5m ago');
    expect(relativeTime('2026-12-01T14:00:00.000Z', now)).toBe('in 2h');
    expect(relativeTime('2026-11-28T12:00:00.000Z', now)).toBe('3d ago');
    expect(relativeTime('2025-01-02T00:00:00.000Z', now)).toBe('2025-01-02');
  });

  it('rounds to the nearest unit: a 2h expiry a moment later is still in 2h, 59.6s is 1m', () => {
    expect(relativeTime('2026-12-01T13:59:59.000Z', now)).toBe('in 2h');
    expect(relativeTime('2026-12-01T13:29:00.000Z', now)).toBe('in 1h');
    expect(relativeTime('2026-12-01T11:59:00.400Z', now)).toBe('1m ago');
    expect(relativeTime('2026-12-01T11:30:00.000Z', now)).toBe('30m ago');
    expect(relativeTime('2026-12-01T12:59:45.000Z', now)).toBe('in 1h');
    expect(relativeTime('2026-12-08T11:00:00.000Z', now)).toBe('in 7d');
  });
});

describe('terminal', () => {
  it('colour: --color wins, then NO_COLOR, then FORCE_COLOR, then a terminal', () => {
    expect(wantsColor('always', { NO_COLOR: '1' }, false)).toBe(true);
    expect(wantsColor('never', { FORCE_COLOR: '1' }, true)).toBe(false);
    expect(wantsColor('auto', { NO_COLOR: '1', FORCE_COLOR: '1' }, true)).toBe(false);
    expect(wantsColor('auto', { NO_COLOR: '' }, true)).toBe(true);
    expect(wantsColor('auto', { FORCE_COLOR: '1' }, false)).toBe(true);
    expect(wantsColor('auto', { FORCE_COLOR: '0' }, true)).toBe(false);
    expect(wantsColor('auto', {}, false)).toBe(false);
    expect(wantsColor('auto', {}, true)).toBe(true);
  });

  it('width: COLUMNS when set, else the terminal, else 80 on a terminal and no limit piped', () => {
    expect(columnsOf({ COLUMNS: '100' }, 80)).toBe(100);
    expect(columnsOf({ COLUMNS: 'x' }, 80)).toBe(80);
    expect(layoutFor(true, {}, undefined)).toEqual({ box: true, width: 80, headers: true });
    expect(layoutFor(true, {}, 132)).toEqual({ box: true, width: 132, headers: true });
    expect(layoutFor(true, {}, 132, false)).toEqual({ box: true, width: 132, headers: false });
    expect(layoutFor(false, {}, undefined)).toEqual({ box: false, width: undefined, headers: true });
    // Piped, COLUMNS is ignored: nothing is cut (SPEC §8).
    expect(layoutFor(false, { COLUMNS: '60' }, undefined)).toEqual({ box: false, width: undefined, headers: true });
  });
});
