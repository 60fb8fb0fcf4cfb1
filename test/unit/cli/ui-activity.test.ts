// The ui's activity chart on a data directory (src/cli/ui/overview.ts), through each journal's tally in the derived
// layer (src/journal/derived/activity-tally.ts): the same answer as the journals read backwards — fresh, behind,
// ahead, damaged, another directory's, and where a line written far out of time order stops the backward read — and
// a second call reads the journals' tails only, not every record of the window.
import { appendFileSync, copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { contextOf } from '../../../src/cli/context';
import { putSession } from '../../../src/cli/operations/session';
import { activity } from '../../../src/cli/ui/overview';
import { fs } from '../../../src/shared/fs';
import { parseLogicalSessionId } from '../../../src/shared/ids';
import { freshDataDir } from '../../helpers/cli';

const T = Date.parse('2026-11-30T12:00:00.000Z');
const HOUR = 3_600_000;
const scope = { globals: {}, env: {} };
const at = (dataDir: string, now: number) => contextOf({ dataDir, now: new Date(now).toISOString() }, {}, () => {});

async function put(dataDir: string, now: number, id: string, state = '{}') {
  await putSession(at(dataDir, now), parseLogicalSessionId(id), { state });
}

/** The chart through the tally and as the journals read backwards, at `now` over `days`. */
async function both(dataDir: string, now: number, days?: string) {
  const got = await activity(at(dataDir, now), scope, days);
  const want = await activity(at(dataDir, now), scope, days, { tally: false });
  return { got, want };
}

const puts = (doc: { hours: { puts: number }[] }) => doc.hours.reduce((n, h) => n + h.puts, 0);
const tallyFile = (dataDir: string) => join(dataDir, 'cache', 'sessions.jsonl.activity');

/** Journal and cache bytes read through crux's fs while `fn` runs. */
async function bytesRead(fn: () => Promise<unknown>): Promise<number> {
  let read = 0;
  const real = fs.readSync;
  const spy = vi.spyOn(fs, 'readSync').mockImplementation(((...args: Parameters<typeof real>) => {
    const n = (real as (...a: unknown[]) => number)(...args);
    read += n;
    return n;
  }) as typeof real);
  try {
    await fn();
  } finally {
    spy.mockRestore();
  }
  return read;
}

afterEach(() => vi.restoreAllMocks());

describe('activity through the tally', () => {
  it('answers as the backward read, and a second call reads the tail only, not the window’s records', async () => {
    const dir = freshDataDir();
    const big = JSON.stringify({ note: 'x'.repeat(2000) });
    for (let i = 0; i < 120; i++) await put(dir, T - 20 * HOUR + i * 60_000, `s${i}`, big);
    const { got, want } = await both(dir, T);
    expect(got).toEqual(want);
    expect(puts(got)).toBe(120);
    const journal = fs.statSync(join(dir, 'sessions.jsonl')).size;
    expect(journal).toBeGreaterThan(200_000);
    // Current: the tally and the head's line (its binding) only.
    expect(await bytesRead(() => activity(at(dir, T), scope, undefined))).toBeLessThan(journal / 20);
    // Behind: the records written since, read from the bound position on.
    for (let i = 0; i < 5; i++) await put(dir, T - HOUR + i, `t${i}`, big);
    expect(await bytesRead(() => activity(at(dir, T), scope, undefined))).toBeLessThan(journal / 10);
    const after = await both(dir, T);
    expect(after.got).toEqual(after.want);
    expect(puts(after.got)).toBe(125);
  });

  it('equals the backward read when the tally is behind, ahead, damaged or another directory’s', async () => {
    const dir = freshDataDir();
    for (let i = 0; i < 30; i++) await put(dir, T - 30 * HOUR + i * HOUR, `s${i % 4}`);
    await activity(at(dir, T), scope, '2');
    const early = readFileSync(tallyFile(dir));
    const journalEarly = readFileSync(join(dir, 'sessions.jsonl'));
    for (let i = 0; i < 10; i++) await put(dir, T - 3 * HOUR + i * 60_000, `u${i}`);
    await activity(at(dir, T), scope, '2');
    const late = readFileSync(tallyFile(dir));
    // Behind.
    writeFileSync(tallyFile(dir), early);
    let r = await both(dir, T, '2');
    expect(r.got).toEqual(r.want);
    expect(puts(r.want)).toBe(40);
    // Ahead: the journal put back as it was (a restored backup), the tally of the longer one left.
    writeFileSync(join(dir, 'sessions.jsonl'), journalEarly);
    writeFileSync(tallyFile(dir), late);
    r = await both(dir, T, '2');
    expect(r.got).toEqual(r.want);
    expect(puts(r.got)).toBe(puts(r.want));
    // Damaged: each byte flipped in turn at a few places of header and body.
    const good = readFileSync(tallyFile(dir));
    for (const i of [3, 100, 505, 512, 520, good.length - 2]) {
      const bad = Buffer.from(good);
      bad[i]! ^= 0x04;
      writeFileSync(tallyFile(dir), bad);
      r = await both(dir, T, '2');
      expect(r.got, `byte ${i}`).toEqual(r.want);
    }
    // Another directory's tally (same file name, other journal): not this journal's head.
    const other = freshDataDir();
    for (let i = 0; i < 40; i++) await put(other, T - 10 * HOUR + i * 60_000, `o${i}`);
    await activity(at(other, T), scope, '2');
    copyFileSync(tallyFile(other), tallyFile(dir));
    r = await both(dir, T, '2');
    expect(r.got).toEqual(r.want);
    // A torn tail: counted (as the backward read counts it), not written into the tally.
    appendFileSync(join(dir, 'sessions.jsonl'), `{"ev":"session.put","ts":"${new Date(T - HOUR).toISOString()}"`);
    r = await both(dir, T, '2');
    expect(r.got).toEqual(r.want);
    expect(readdirSync(join(dir, 'cache')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('reads backwards where a line far out of time order stops the backward read before lines the tally counts', async () => {
    const dir = freshDataDir();
    // In the window, then a writer whose clock is 30 hours behind, then in the window again.
    for (let i = 0; i < 5; i++) await put(dir, T - 5 * HOUR + i * 60_000, `a${i}`);
    await put(dir, T - 30 * HOUR, 'late');
    for (let i = 0; i < 3; i++) await put(dir, T - 2 * HOUR + i * 60_000, `b${i}`);
    const { got, want } = await both(dir, T, '1');
    expect(got).toEqual(want);
    // The backward read stops at the late line: the five before it are not shown (the tally alone would show them).
    expect(puts(want)).toBe(3);
    // A window that holds the late line is not stopped by it: all nine.
    const wide = await both(dir, T, '2');
    expect(wide.got).toEqual(wide.want);
    expect(puts(wide.want)).toBe(9);
  });
});
