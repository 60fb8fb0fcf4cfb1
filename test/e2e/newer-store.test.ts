// A store a newer crux wrote is refused for good by every command (SPEC §1: 5, saying which version reads it), and
// nothing of it is changed: no record passed over, none quarantined by a repair. (The PostgreSQL store's schema
// version: test/reliability/pg-store.test.ts.)
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir, snapshotDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';

/** Appends to `file` a record of format version 2 that verifies, chained to the last one: what a newer crux writes. */
function appendNewerRecord(file: string): void {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const last = JSON.parse(lines.at(-1)!);
  const body = `{"v":2,"seq":${last.seq + 1},"ts":"2026-12-07T00:00:00.000Z","ev":"session.put","data":{"id":"z","shape":"new"},"p":"${last.h}"}`;
  const h = createHash('sha256').update(body).digest('hex').slice(0, 32);
  fs.appendFileSync(file, `${body.slice(0, -1)},"h":"${h}"}\n`);
}

describe('a data directory a newer crux wrote', () => {
  it('is refused with 5 by every command, naming the format version that reads it, and left as it was', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 'a', '{}'])).exitCode).toBe(0);
    expect((await crux(dir, ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
    appendNewerRecord(join(dir, 'sessions.jsonl'));
    const before = snapshotDir(dir);
    for (const args of [
      ['session', 'get', 'a'],
      ['session', 'put', 'b', '{}'],
      ['session', 'close', 'a'],
      ['session', 'list'],
      ['session', 'list', '--limit', '1'],
      ['session', 'history', 'a'],
      ['journal', 'check'],
      ['journal', 'check', '--repair'],
      ['journal', 'compact'],
    ]) {
      const run = await crux(dir, args);
      expect({ args, exitCode: run.exitCode }).toEqual({ args, exitCode: 5 });
      expect(run.stderr).toBe(
        'crux: the store holds records of format version 2, newer than this crux reads (1): a newer crux wrote them (nothing was changed; run the newer crux that wrote them, which reads format version 2)\n',
      );
    }
    const json = await crux(dir, ['--json', 'session', 'get', 'a']);
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 5, kind: 'invalid_input' });
    expect(snapshotDir(dir)).toEqual(before);
    expect(fs.existsSync(join(dir, 'quarantine'))).toBe(false);
  });
});
