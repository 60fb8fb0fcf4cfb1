// Damage never passed over in silence on read (SPEC §3): a torn tail is reported by every read (one stderr line,
// a `warnings` entry with --json, exit 0), but not while a writer holds the lock (a write in progress); history/
// that cannot be read is exit 5 naming it, never "no history" (needs root: the reader runs as another uid).
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLock } from '../../src/journal/dir/lock/lock';
import { CRUX, crux as spawned, freshDataDir, PERMISSION_FLAG, tempDir, testEnv } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { otherUserSkipReason, titled } from '../helpers/tools';

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
    for (const args of [
      ['session', 'get', 'a'],
      ['session', 'list'],
      ['--json', 'session', 'get', 'a'],
    ]) {
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
      // The lock held by this process: the reader is another.
      const run = await spawned(dir, ['--json', 'session', 'list']);
      expect(run.exitCode).toBe(0);
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).not.toHaveProperty('warnings');
    } finally {
      await held.release();
    }
    expect((await crux(dir, ['--json', 'session', 'list'])).stderr).toContain('torn tail');
  });
});

describe('a torn tail of cases.jsonl on read', () => {
  async function tornCases() {
    const dir = freshDataDir();
    for (const task of ['rotate the tls certificate', 'renew the tls certificate']) {
      expect((await crux(dir, ['case', 'record', '--task', task, '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
    }
    fs.appendFileSync(join(dir, 'cases.jsonl'), TAIL);
    return dir;
  }
  const warning = (dir: string) =>
    `crux: ${join(dir, 'cases.jsonl')}:3: torn tail (${TAIL.length} bytes without a final newline) (run \`crux journal check\`)\n`;
  const entry = { file: 'cases.jsonl', line: 3, reason: `torn tail (${TAIL.length} bytes without a final newline)` };

  it('case retrieve reports it through the snapshot and through a replay (cache/ gone); list and show too', async () => {
    const dir = await tornCases();
    const before = fs.readFileSync(join(dir, 'cases.jsonl'));
    expect(fs.existsSync(join(dir, 'cache', 'cases.jsonl.state')), 'the snapshot a retrieve reads through').toBe(true);
    for (const drop of [false, true]) {
      if (drop) fs.rmSync(join(dir, 'cache'), { recursive: true, force: true });
      const run = await crux(dir, ['--json', 'case', 'retrieve', 'tls certificate']);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stderr).toBe(warning(dir));
      const doc = JSON.parse(run.stdout);
      expect(doc.results).toHaveLength(2);
      expect(doc.warnings).toEqual([entry]);
      const human = await crux(dir, ['case', 'retrieve', 'tls', 'certificate']);
      expect(human.exitCode).toBe(0);
      expect(human.stderr).toBe(warning(dir));
    }
    const id = JSON.parse((await crux(dir, ['--json', 'case', 'list'])).stdout).cases[0].case_id;
    for (const args of [
      ['--json', 'case', 'list'],
      ['--json', 'case', 'show', id],
    ]) {
      const run = await crux(dir, args);
      expect(run.exitCode, args.join(' ')).toBe(0);
      expect(run.stderr, args.join(' ')).toBe(warning(dir));
      expect(JSON.parse(run.stdout).warnings, args.join(' ')).toEqual([entry]);
    }
    // A read repairs nothing.
    expect(fs.readFileSync(join(dir, 'cases.jsonl'))).toEqual(before);
  });

  it('retrieve passes it over while a writer holds the lock; after the next write it is gone', async () => {
    const dir = await tornCases();
    const held = await acquireLock(dir, 1000);
    try {
      // The lock held by this process: the reader is another.
      const run = await spawned(dir, ['--json', 'case', 'retrieve', 'tls']);
      expect(run.exitCode).toBe(0);
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).not.toHaveProperty('warnings');
    } finally {
      await held.release();
    }
    expect((await crux(dir, ['case', 'record', '--task', 'tls again', '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
    const after = await crux(dir, ['--json', 'case', 'retrieve', 'tls']);
    expect(after.stderr).toBe('');
    expect(JSON.parse(after.stdout).results).toHaveLength(3);
  });
});

const NOBODY = 65534;

/** crux as another user, with no supplementary groups. */
async function cruxAs(uid: number, dir: string, args: string[]) {
  const run = await execa('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', CRUX, '--data-dir', dir, ...args], {
    reject: false,
    env: testEnv({ HOME: '/tmp' }),
    extendEnv: false,
  });
  return { exitCode: run.exitCode ?? -1, stdout: String(run.stdout), stderr: String(run.stderr) };
}

const nobodySkip = otherUserSkipReason(CRUX);

describe('history/ that cannot be read', () => {
  it.skipIf(nobodySkip !== undefined)(
    titled('is exit 5 naming it for session history, get --at and journal check; other reads and writes go on', nobodySkip),
    async () => {
      expect(process.getuid?.(), 'these tests run as root (to read as another uid)').toBe(0);
      const parent = tempDir();
      fs.chmodSync(parent, 0o755);
      const dir = join(parent, 'data');
      for (const args of [
        ['session', 'put', 's', '{"v":1}'],
        ['session', 'put', 's', '{"v":2}'],
        ['journal', 'compact'],
        ['session', 'put', 's', '{"v":3}'],
      ]) {
        expect((await crux(dir, args)).exitCode, args.join(' ')).toBe(0);
      }
      await execa('chown', ['-R', `${NOBODY}:${NOBODY}`, dir]);
      // history/ is root's, 0700: its owner ran a compaction as root, say.
      fs.chownSync(join(dir, 'history'), 0, 0);
      fs.chmodSync(join(dir, 'history'), 0o700);
      for (const args of [
        ['session', 'history', 's'],
        ['session', 'get', 's', '--at', '1'],
        ['journal', 'check'],
        ['journal', 'compact'],
        ['--json', 'session', 'history', 's'],
      ]) {
        const run = await cruxAs(NOBODY, dir, args);
        expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(5);
        expect(run.stderr, args.join(' ')).toContain(`${join(dir, 'history')} (EACCES)`);
        expect(run.stdout, args.join(' ')).toBe('');
      }
      for (const args of [
        ['session', 'get', 's'],
        ['session', 'list'],
        ['session', 'put', 't', '{}'],
      ]) {
        expect((await cruxAs(NOBODY, dir, args)).exitCode, args.join(' ')).toBe(0);
      }
      // doctor says so (a warning: the journals are whole), never "healthy" alone.
      const doctor = JSON.parse((await cruxAs(NOBODY, dir, ['--json', 'doctor'])).stdout);
      expect(doctor.findings).toContainEqual(
        expect.objectContaining({
          level: 'warning',
          code: 'history_unreadable',
          message: expect.stringContaining(`${join(dir, 'history')} cannot be read (EACCES)`),
        }),
      );
      // A history file that cannot be read, in a history/ that can: the file is named.
      fs.chownSync(join(dir, 'history'), NOBODY, NOBODY);
      const [file] = fs.readdirSync(join(dir, 'history'));
      fs.chownSync(join(dir, 'history', file!), 0, 0);
      fs.chmodSync(join(dir, 'history', file!), 0o600);
      const run = await cruxAs(NOBODY, dir, ['session', 'history', 's']);
      expect(run.exitCode).toBe(5);
      expect(run.stderr).toContain(join(dir, 'history', file!));
      // Readable again: the whole history, oldest version included.
      fs.chownSync(join(dir, 'history', file!), NOBODY, NOBODY);
      const history = JSON.parse((await cruxAs(NOBODY, dir, ['--json', 'session', 'history', 's'])).stdout).history;
      expect(history.at(-1).seq).toBe(1);
    },
  );
});

describe("Node's permission model in NODE_OPTIONS", () => {
  const env = { NODE_OPTIONS: `${PERMISSION_FLAG} --allow-fs-read=*` };

  it('a write it refuses is exit 5 naming the path (not 1); reads answer; no ExperimentalWarning on stderr', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 'a', '{}'])).exitCode).toBe(0);
    for (const args of [
      ['session', 'put', 'b', '{}'],
      ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o'],
    ]) {
      const run = await crux(dir, args, { env });
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(5);
      expect(run.stderr).toMatch(/^crux: permission denied by Node's permission model: \/\S+ \(ERR_ACCESS_DENIED\) \(.*\)\n$/);
      expect(run.stderr).not.toContain('ExperimentalWarning');
    }
    const json = await crux(dir, ['--json', 'session', 'put', 'b', '{}'], { env });
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 5, kind: 'permission_denied' });
    const read = await crux(dir, ['session', 'get', 'a'], { env });
    expect(read).toMatchObject({ exitCode: 0, stdout: '{}', stderr: '' });
    expect(JSON.parse((await crux(dir, ['--json', 'session', 'list'], { env })).stdout).sessions).toHaveLength(1);
  });
});

describe("Node's permission model refusing crux's own files or the data directory", () => {
  // What Node from 23.? does by itself under --permission (its entry point, the launcher, is readable; nothing else),
  // and what Node 20 does with --allow-fs-read naming bin/ alone: the launcher runs, and the bundles it loads are refused.
  const root = resolve(__dirname, '../..');
  const env = { NODE_OPTIONS: `${PERMISSION_FLAG} --allow-fs-read=${join(root, 'bin', '*')}` };

  it("says in one line that crux cannot read its own files and what allows it: exit 5, not Node's stack (1)", async () => {
    const dir = freshDataDir();
    for (const args of [
      ['session', 'get', 'a'],
      ['session', 'put', 'a', '{}'],
      ['session', 'list'],
      ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o'],
      ['case', 'retrieve', 't'],
      ['journal', 'check'],
    ]) {
      const run = await crux(dir, args, { env });
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(5);
      expect(run.stderr).toMatch(
        /^crux: permission denied by Node's permission model: \/\S+\/dist\/[\w-]+\.cjs \(ERR_ACCESS_DENIED\) \(nothing was changed; crux reads its own files in \/\S+\/dist: it needs --allow-fs-read=\/\S+\/dist\/\* \(and the data directory\) in NODE_OPTIONS, or run without --permission\)\n$/,
      );
    }
    const json = await crux(dir, ['--json', 'journal', 'check'], { env });
    expect({ exitCode: json.exitCode, error: JSON.parse(json.stderr).error }).toMatchObject({ exitCode: 5, error: { code: 5, kind: 'permission_denied' } });
  });

  it('names the flag a refused read of the data directory needs', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 'a', '{}'])).exitCode).toBe(0);
    const run = await crux(dir, ['session', 'get', 'a'], { env: { NODE_OPTIONS: `${PERMISSION_FLAG} --allow-fs-read=${join(root, '*')}` } });
    expect(run.exitCode, run.stderr).toBe(5);
    expect(run.stderr).toMatch(
      /^crux: permission denied by Node's permission model: \/\S+ \(ERR_ACCESS_DENIED\) \(nothing was changed; it needs --allow-fs-read=\/\S+ in NODE_OPTIONS, or run without --permission\)\n$/,
    );
  });
});

describe('a journal that is not a regular file', () => {
  it('a FIFO in place of a journal never blocks: every command that opens it refuses at once (5), naming it', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
    await execa('mkfifo', [join(dir, 'sessions.jsonl')]);
    for (const args of [
      ['session', 'list'],
      ['session', 'get', 'x'],
      ['session', 'put', 'x', '{}'],
      ['journal', 'check'],
      ['--json', 'session', 'list'],
    ]) {
      // Without O_NONBLOCK the open alone would wait for a writer forever: the test would time out.
      const run = await crux(dir, args, { timeout: 20_000 });
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(5);
      expect(run.stderr, args.join(' ')).toContain(`${join(dir, 'sessions.jsonl')} is a FIFO`);
    }
    expect(fs.statSync(join(dir, 'sessions.jsonl')).isFIFO()).toBe(true);
    // The other journals answer.
    expect(JSON.parse((await crux(dir, ['--json', 'case', 'list'])).stdout).cases).toHaveLength(1);
  });
});
