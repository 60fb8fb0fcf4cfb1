// The dashboard's PostgreSQL reader (pg-reader.ts): a journal's lines newest first, in the rows' order — by line as a
// number (the column), never as text, where line 9 would come before line 12 and each page would sort the table.
import { describe, expect, it } from 'vitest';
import { openPgReader } from '../../../src/journal/pg/pg-reader';
import { journalLines } from '../../helpers/cli';
import { freshStoreUrl, pgSkipReason } from '../../helpers/pg';
import { crux } from '../../helpers/run-cli';

describe.skipIf(pgSkipReason() !== undefined)('the ui reader of a PostgreSQL store', () => {
  it('reads a journal newest first in line order, past line 9 and 99, and stops where `keep` says', async () => {
    const url = freshStoreUrl();
    const input = Array.from({ length: 120 }, (_, i) => JSON.stringify({ session_id: `s${i}`, state: { i } })).join('\n');
    const r = await crux(url, ['--now', '2026-12-01T12:00:00Z', 'session', 'import', '-'], { input });
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = journalLines(url, 'sessions.jsonl');
    expect(lines.length).toBeGreaterThan(100);
    const reader = openPgReader(url, 'test');
    try {
      const read: string[] = [];
      await reader.linesBackwards('sessions.jsonl', (line) => {
        read.push(line);
        return true;
      });
      expect(read).toEqual([...lines].reverse());
      const some: string[] = [];
      await reader.linesBackwards('sessions.jsonl', (line) => some.push(line) < 15);
      expect(some).toEqual([...lines].reverse().slice(0, 15));
    } finally {
      await reader.close();
    }
  });
});
