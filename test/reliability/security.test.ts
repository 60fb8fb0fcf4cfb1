// Security: private modes whatever the umask (data dir and every directory 0700, every file 0600, quarantine and
// keys too), key files readable by others refused, URL credentials never on disk or in output, and the MAC
// compared in constant time.
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { startShell, TIMEOUT } from './harness';

const SECRET = 'tok3n-s3cret';
const URL = `https://deploy:${SECRET}@git.example.com/repo.git`;

function walk(dir: string, out: { path: string; mode: number; dir: boolean }[] = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    out.push({ path, mode: fs.statSync(path).mode & 0o777, dir: entry.isDirectory() });
    if (entry.isDirectory()) walk(path, out);
  }
  return out;
}

describe('security', { timeout: TIMEOUT }, () => {
  it('under umask 000, every directory crux creates is 0700 and every file 0600 (journals, quarantine, keys, caches)', async () => {
    const dir = freshDataDir();
    const pkg = `${dir}.pkg`;
    const script = `
set -e
umask 000
c() { "$CRUX" --data-dir '${dir}' "$@"; }
c session put a '{"n":1}' >/dev/null
c --agent alice session put s '{"n":2}' >/dev/null
c case record --task t --action a --outcome o >/dev/null
printf '{"v":1,"seq":' >> '${dir}/sessions.jsonl'
c session put b '{}' >/dev/null 2>&1
c handoff mint s --from alice --to bob --out '${pkg}' >/dev/null
c handoff accept '${pkg}' --as bob >/dev/null
c handoff keygen --agent alice >/dev/null
c session get a >/dev/null
c case list >/dev/null
c journal compact >/dev/null
`;
    const run = await startShell(script).done;
    expect(run.code, run.stderr).toBe(0);
    // Damage a line so that repair writes its quarantine files too.
    const sessions = join(dir, 'sessions.jsonl');
    fs.writeFileSync(sessions, fs.readFileSync(sessions, 'utf8').replace('"n\\":1', '"n\\":7'));
    const repair = await startShell(`umask 000; "$CRUX" --data-dir '${dir}' journal check --repair`).done;
    expect(repair.code, repair.stderr).toBe(0);

    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    const entries = walk(dir);
    expect(entries.some((e) => e.path.includes(`${join('quarantine', '')}`))).toBe(true);
    expect(entries.some((e) => e.path.includes(join('keys', '')))).toBe(true);
    const wrong = entries.filter((e) => e.mode !== (e.dir ? 0o700 : 0o600)).map((e) => `${e.path}: ${e.mode.toString(8)}`);
    expect(wrong).toEqual([]);
    expect(fs.statSync(pkg).mode & 0o777).toBe(0o600);
  });

  it('a key file readable by others is refused', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['--agent', 'alice', 'session', 'put', 's', '{}'])).exitCode).toBe(0);
    expect((await crux(dir, ['handoff', 'mint', 's', '--from', 'alice'])).exitCode).toBe(0);
    const key = join(dir, 'keys', 'handoff.key');
    const before = fs.readFileSync(key);
    fs.chmodSync(key, 0o644);
    const run = await crux(dir, ['handoff', 'mint', 's', '--from', 'alice']);
    expect([0, 1]).not.toContain(run.exitCode);
    expect(run.stderr).toMatch(/accessible by others.*0644/);
    expect(fs.readFileSync(key).equals(before)).toBe(true);
  });

  it('URL credentials in free text never reach the disk or the output', async () => {
    const dir = freshDataDir();
    const taskFile = `${dir}.task.json`;
    fs.mkdirSync(resolve(dir, '..'), { recursive: true });
    fs.writeFileSync(
      taskFile,
      JSON.stringify({ requester: URL, desired_outcome: `push to ${URL}`, sources: [URL], acceptance_criteria: [URL], boundaries: [URL], blocker_rule: URL }),
    );
    const runs = [
      await crux(dir, [
        'case',
        'record',
        '--task',
        `clone ${URL}`,
        '--action',
        `git clone ${URL}`,
        '--outcome',
        `ok ${URL}`,
        '--context',
        URL,
        '--tag',
        'git',
        '--receipt',
        URL,
      ]),
      await crux(dir, ['case', 'record', '--stdin'], { input: JSON.stringify({ task: URL, action: URL, outcome: URL, context: URL }) }),
      await crux(dir, ['--json', 'case', 'list']),
      await crux(dir, ['case', 'retrieve', 'clone', 'git', 'example']),
      await crux(dir, ['case', 'export']),
      await crux(dir, ['session', 'put', 'a', '{}']),
      await crux(dir, ['session', 'archive', 'a', '--reason', `moved to ${URL}`]),
      await crux(dir, ['--json', 'session', 'list', '--all']),
      await crux(dir, ['session', 'unarchive', 'a']),
      await crux(dir, ['session', 'close', 'a', '--summary', `done, see ${URL}`]),
      await crux(dir, ['--json', 'session', 'get', 'a']),
      await crux(dir, ['session', 'export']),
      await crux(dir, ['--agent', 'alice', 'session', 'put', 's', '{}']),
      await crux(dir, [
        'handoff',
        'mint',
        's',
        '--from',
        'alice',
        '--to',
        'bob',
        '--message',
        `pick up ${URL}`,
        '--task-file',
        taskFile,
        '--out',
        `${dir}.pkg`,
      ]),
      await crux(dir, ['handoff', 'inspect', `${dir}.pkg`, '--as', 'bob']),
      await crux(dir, ['handoff', 'accept', `${dir}.pkg`, '--as', 'bob']),
      await crux(dir, ['--json', 'handoff', 'list']),
      await crux(dir, ['doctor']),
    ];
    for (const run of runs) {
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stdout + run.stderr).not.toContain(SECRET);
    }
    const onDisk = walk(dir)
      .filter((e) => !e.dir)
      .map((e) => e.path);
    for (const path of [...onDisk, `${dir}.pkg`]) {
      const bytes = fs.readFileSync(path);
      expect(bytes.includes(SECRET), path).toBe(false);
      // The envelope carries the package as base64.
      if (path.endsWith('.pkg')) expect(Buffer.from(JSON.parse(bytes.toString()).payload_b64, 'base64').includes(SECRET)).toBe(false);
    }
    // Scrubbed, not dropped: the URL is still there without its credentials.
    expect(fs.readFileSync(join(dir, 'cases.jsonl'), 'utf8')).toContain('https://git.example.com/repo.git');
  });

  it('the handoff MAC is compared with crypto.timingSafeEqual, not ===, and a forged MAC is refused (exit 6)', async () => {
    const crypto = fs.readFileSync(resolve(__dirname, '../../src/domain/handoff/crypto.ts'), 'utf8');
    const checks = fs.readFileSync(resolve(__dirname, '../../src/domain/handoff/checks.ts'), 'utf8');
    const compare = /export function constantTimeEqual\([^)]*\)[^{]*\{([\s\S]*?)\n\}/.exec(crypto)?.[1] ?? '';
    expect(compare).toContain('timingSafeEqual(a, b)');
    expect(checks).toMatch(/constantTimeEqual\(expected, signature\)/);
    expect(checks.replace(/=== undefined/g, '')).not.toMatch(/signature\s*===|===\s*signature|expected\s*===|\.equals\(/);

    const dir = freshDataDir();
    expect((await crux(dir, ['--agent', 'alice', 'session', 'put', 's', '{}'])).exitCode).toBe(0);
    const mint = await crux(dir, ['--json', 'handoff', 'mint', 's', '--from', 'alice', '--to', 'bob']);
    const envelope = JSON.parse(mint.stdout);
    const mac = Buffer.from(envelope.signature_b64, 'base64');
    mac[mac.length - 1]! ^= 1;
    const forged = JSON.stringify({ ...envelope, signature_b64: mac.toString('base64') });
    const run = await crux(dir, ['handoff', 'accept', '-', '--as', 'bob'], { input: forged });
    expect(run.exitCode, run.stderr).toBe(6);
  });
});
