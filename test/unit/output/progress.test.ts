import { describe, expect, it } from 'vitest';
import { PROGRESS_AFTER_MS, startImportProgress, startProgress } from '../../../src/output/progress';

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  return { isTTY, writes, write: (text: string) => writes.push(text) };
}

describe('progress on stderr', () => {
  it('stays silent when stderr is not a TTY', () => {
    const stream = fakeStream(false);
    const progress = startProgress('checking', { stream });
    expect(progress.sink).toBeUndefined();
    progress.done();
    expect(stream.writes).toEqual([]);
  });

  it('stays silent for short work, even on a TTY', () => {
    const stream = fakeStream(true);
    const t = 0;
    const progress = startProgress('checking', { stream, clock: () => t });
    for (let i = 1; i <= 10_000; i++) progress.sink!('sessions.jsonl', i * 100, 1_000_000);
    progress.done();
    expect(stream.writes).toEqual([]);
  });

  it('draws \\r-updated lines once the work takes over a second, and erases them when done', () => {
    const stream = fakeStream(true);
    let t = 0;
    const progress = startProgress('checking', { stream, clock: () => t });
    for (let i = 1; i <= 4096; i++) {
      t = i; // one millisecond per record
      progress.sink!('sessions.jsonl', i * 100, 409_600);
    }
    expect(t).toBeGreaterThan(PROGRESS_AFTER_MS);
    expect(stream.writes.length).toBeGreaterThan(1);
    expect(stream.writes[0]).toMatch(/^\r\x1b\[Kcrux: checking sessions\.jsonl: \d+% /);
    expect(stream.writes.every((w) => !w.includes('\n'))).toBe(true);
    progress.done();
    expect(stream.writes.at(-1)).toBe('\r\x1b[K');
  });

  it('draws for a large journal even when it is fast', () => {
    const stream = fakeStream(true);
    const progress = startProgress('compacting', { stream, clock: () => 0 });
    for (let i = 1; i <= 60_000; i++) progress.sink!('cases.jsonl', i, 60_000);
    expect(stream.writes.length).toBe(1); // the clock never advances: one draw, no redraw storm
    expect(stream.writes[0]).toContain('compacting cases.jsonl');
  });

  it('is off when the caller disables it (--quiet)', () => {
    expect(startProgress('checking', { stream: fakeStream(true), enabled: false }).sink).toBeUndefined();
  });
});

describe('import progress', () => {
  it('runs from reading through encoding, applying and writing to 100%, every line within the terminal', () => {
    const writes: string[] = [];
    const stream = { isTTY: true, columns: 60, write: (text: string) => writes.push(text) };
    let t = 0;
    const progress = startImportProgress('/a/very/long/path/to/the/import/file.jsonl', { stream, clock: () => t, env: {} });
    for (let i = 1; i <= 4096; i++) {
      t += 1;
      progress.onLine!(i * 10, 40_960);
    }
    for (const phase of ['encoding', 'applying'] as const) {
      for (let done = 0; done <= 4096; done += 1024) {
        t += 200;
        progress.onWork!(phase, done, 4096);
      }
    }
    t += 200;
    progress.onWork!('writing', 0, 1);
    progress.done();
    const lines = writes.map((w) => w.replace('\r\x1b[K', '')).filter(Boolean);
    for (const line of lines) expect([...line].length, line).toBeLessThanOrEqual(59);
    const percents = lines.map((l) => Number(/: (\d+)%/.exec(l)![1]));
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(lines.some((l) => l.includes('applying'))).toBe(true);
    expect(lines.at(-1)).toMatch(/ 100% done$/);
    expect(lines[0]).toMatch(/^crux: importing …/);
    expect(writes.at(-1)).toBe('\r\x1b[K');
  });

  it('is silent off a terminal', () => {
    const progress = startImportProgress('f', { stream: { isTTY: false, write: () => {} } });
    expect(progress.onLine).toBeUndefined();
    expect(progress.onWork).toBeUndefined();
  });
});
