// Damage never passed over in silence on read (SPEC §3): a torn tail is reported by every read (one stderr line,
// a `warnings` entry with --json, exit 0), but not while a writer holds the lock (a write in progress).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLock } from '../../src/journal/lock';
import { crux, freshDataDir } from '../helpers/cli';

const TAIL = '{"v":1,"seq":2,"partial';

async function tornStore() {
  const dir = freshDataDir();
  expect((await crux(dir, ['session', 'put', 'a', '{"n":1}'])).exitCode).toBe(0);
  fs.appendFileSync(join(dir, 'sessions.jsonl'), TAIL);
  return dir;
}

describe('a torn tail on read', () => {
  it('session list --json: exit 0, one stderr line, a warnings entry; the store is left as it was', async () => {
    const dir = await tornStore();
    const before = fs.readFileSync(join(dir, 'sessions.jsonl'));
    const run = await crux(dir, ['--json', 'session', 'list']);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toBe(`crux: ${join(dir, 'sessions.jsonl')}:2: torn tail (${TAIL.length} bytes without a final newline) (run \`crux journal check\`)\n`);
    const doc = JSON.parse(run.stdout);
    expect(doc.sessions.map((s: any) => s.session_id)).toEqual(['a']);
    expect(doc.warnings).toEqual([{ file: 'sessions.jsonl', line: 2, reason: `torn tail (${TAIL.length} bytes without a final newline)` }]);
    // A read repairs nothing: the tail stays for check --repair or the next write to quarantine.
    expect(fs.readFileSync(join(dir, 'sessions.jsonl'))).toEqual(before);
  });

  it('every read reports it: get, a human list; journal check still says 9 and the next write quarantines it', async () => {
    const dir = await tornStore();
    for (const args of [['session', 'get', 'a'], ['session', 'list'], ['--json', 'session', 'get', 'a']]) {
      const run = await crux(dir, args);
      expect(run.exitCode, args.join(' ')).toBe(0);
      expect(run.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(run.stderr, args.join(' ')).toContain('torn tail');
    }
    expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(9);
    expect((await crux(dir, ['session', 'put', 'b', '{}'])).exitCode).toBe(0);
    const after = await crux(dir, ['--json', 'session', 'list']);
    expect(after.stderr).toBe('');
    expect(JSON.parse(after.stdout)).not.toHaveProperty('warnings');
  });

  it('is passed over while a writer holds the lock: an unterminated line is then a write in progress', async () => {
    const dir = await tornStore();
    const held = await acquireLock(dir, 1000);
    try {
      const run = await crux(dir, ['--json', 'session', 'list']);
      expect(run.exitCode).toBe(0);
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).not.toHaveProperty('warnings');
    } finally {
      await held.release();
    }
    expect((await crux(dir, ['--json', 'session', 'list'])).stderr).toContain('torn tail');
  });
});
