// `session import` and `case import` draw a progress line on a TTY's stderr for large imports, and erase it. The
// line is the one startImportProgress (src/output/progress.ts) draws for both: `npm test` holds the line naming the
// whole file on session import and the narrow terminal on case import; CI's run (FULL) also case import's whole name.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, FULL, tempDir, testEnv } from '../helpers/cli';
import { PROGRESS_AFTER_RECORDS } from '../../src/output/progress';

const LINES = PROGRESS_AFTER_RECORDS + 1024;
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs crux under a pseudo-terminal (util-linux `script`): stdout and stderr arrive together, as on a screen. */
async function onTty(args: string[], cols?: number): Promise<{ exitCode: number; screen: string }> {
  const command = `${cols === undefined ? '' : `stty cols ${cols}; `}${[CRUX, ...args].map(quote).join(' ')}`;
  const run = await execa('script', ['-qec', command, '/dev/null'], {
    reject: false,
    stripFinalNewline: false,
    env: testEnv(),
    extendEnv: false,
    stdin: 'ignore',
  });
  return { exitCode: run.exitCode ?? -1, screen: String(run.stdout) };
}

function writeLines(dir: string, name: string, line: (i: number) => string): string {
  const path = join(dir, name);
  fs.writeFileSync(path, Array.from({ length: LINES }, (_, i) => `${line(i)}\n`).join(''));
  return path;
}

describe('import progress', () => {
  it.skipIf(!FULL)(
    `case import: a \\r-redrawn line on a TTY, erased before the summary${FULL ? '' : ' (skipped: in CI and npm run test:stress)'}`,
    async () => {
      const dir = tempDir();
      const file = writeLines(dir, 'cases.jsonl', (i) => `{"task":"task ${i}","action":"a","outcome":"o"}`);
      const { exitCode, screen } = await onTty(['--data-dir', join(dir, 'data'), 'case', 'import', file]);
      expect(exitCode, screen).toBe(0);
      expect(screen).toMatch(new RegExp(`\\r\\x1b\\[Kcrux: importing ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: \\d+% `));
      expect(screen).toMatch(/\r\x1b\[Kimported \d+ cases \(\d+ new, 0 replaced\)\r?\n$/);
    },
  );

  it('case import on an 80-column terminal: every redraw fits, the phase after parsing is shown, it reaches 100%', async () => {
    const dir = tempDir();
    const file = writeLines(
      dir,
      `a-rather-long-file-name-for-an-import-of-many-cases-${'x'.repeat(30)}.jsonl`,
      (i) => `{"task":"task ${i}","action":"a","outcome":"o"}`,
    );
    const { exitCode, screen } = await onTty(['--data-dir', join(dir, 'data'), 'case', 'import', file], 80);
    expect(exitCode, screen).toBe(0);
    const draws = screen
      .split('\r')
      .map((d) => d.replace('\x1b[K', ''))
      .filter((d) => d.startsWith('crux: importing'));
    expect(draws.length).toBeGreaterThan(0);
    for (const d of draws) expect([...d].length, d).toBeLessThan(80);
    expect(
      draws.some((d) => / (encoding|applying|writing)/.test(d)),
      draws.join('\n'),
    ).toBe(true);
    expect(draws.at(-1)).toMatch(/ 100% /);
    expect(screen).toMatch(/\r\x1b\[Kimported \d+ cases \(\d+ new, 0 replaced\)\r?\n$/);
  });

  // --quiet turning it off is startProgress's own (test/unit/output/progress.test.ts), as for journal check.
  it('session import: a \\r-redrawn line naming the file on a TTY, erased before the summary', async () => {
    const dir = tempDir();
    const file = writeLines(dir, 'sessions.jsonl', (i) => `{"session_id":"s${i}","state":{"n":${i}}}`);
    // Wide enough for the whole name beside the counts (an 80-column line gives way: the case import above).
    const { exitCode, screen } = await onTty(['--data-dir', join(dir, 'data'), 'session', 'import', file], 250);
    expect(exitCode, screen).toBe(0);
    expect(screen).toMatch(new RegExp(`\\r\\x1b\\[Kcrux: importing ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: \\d+% `));
    expect(screen).toMatch(/\r\x1b\[Kimported \d+ sessions?\b[^\n]*\r?\n$/);
  });
});
