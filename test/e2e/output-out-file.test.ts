// `--out` writes as `>` does (SPEC §3: crux never replaces what it did not create): into a device node, through a
// symlink, into another user's file keeping its owner, mode and hard links; a new file is 0600; `-` and
// /dev/stdout are standard output. Needs root (a device node, another user's file).
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { freshDataDir, tempDir } from '../helpers/cli';
// In-process: what these commands answer, not the process (test/helpers/run-cli.ts).
import { crux } from '../helpers/run-cli';

const NOBODY = 65534;

describe('--out', () => {
  const dir = freshDataDir();
  const out = tempDir('crux-out-');
  let n = 0;
  /** Mints a fresh session's package to `target` (mint), or exports the first package again (export). */
  const mint = async (target: string, extra: string[] = []) => {
    n += 1;
    expect((await crux(dir, ['--agent', 'a', 'session', 'put', `s${n}`, '{}'])).exitCode).toBe(0);
    return crux(dir, [...extra, '--agent', 'a', 'handoff', 'mint', `s${n}`, '--out', target]);
  };
  const isEnvelope = (text: string) => 'payload_b64' in JSON.parse(text);

  beforeAll(() => {
    expect(process.getuid?.(), "these tests run as root (mknod, another user's file)").toBe(0);
  });

  it('writes into a character device without replacing it', async () => {
    const device = join(out, 'mynull');
    await execa('mknod', ['-m', '666', device, 'c', '1', '3']);
    for (const run of [
      await mint(device),
      await crux(dir, ['handoff', 'export', (await crux(dir, ['-q', 'handoff', 'list'])).stdout.split('\n')[0]!, '--out', device]),
    ]) {
      expect(run.exitCode, run.stderr).toBe(0);
      const st = fs.lstatSync(device);
      expect(st.isCharacterDevice()).toBe(true);
      expect(st.mode & 0o777).toBe(0o666);
    }
  });

  it('writes through a symlink, leaving the link a link', async () => {
    const target = join(out, 'real.json');
    fs.writeFileSync(target, 'old');
    const link = join(out, 'link.json');
    fs.symlinkSync(target, link);
    expect((await mint(link)).exitCode).toBe(0);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(isEnvelope(fs.readFileSync(target, 'utf8'))).toBe(true);
    // A dangling link gets its target made, as > makes it.
    const dangling = join(out, 'dangling.json');
    fs.symlinkSync(join(out, 'made.json'), dangling);
    expect((await mint(dangling)).exitCode).toBe(0);
    expect(fs.lstatSync(dangling).isSymbolicLink()).toBe(true);
    expect(isEnvelope(fs.readFileSync(join(out, 'made.json'), 'utf8'))).toBe(true);
    // One into a directory that does not exist is 5, as a missing directory is, before anything is minted.
    const nowhere = join(out, 'nowhere.json');
    fs.symlinkSync(join(out, 'no', 'such', 'dir.json'), nowhere);
    const listed = (await crux(dir, ['-q', '--agent', 'a', 'handoff', 'list'])).stdout;
    const refused = await mint(nowhere);
    expect(refused.exitCode, refused.stderr).toBe(5);
    expect(refused.stderr).toMatch(/^crux: --out .*nowhere\.json: no such directory .*no\/such/);
    expect((await crux(dir, ['-q', '--agent', 'a', 'handoff', 'list'])).stdout).toBe(listed);
  });

  it("keeps an existing file's owner, mode and hard links", async () => {
    const theirs = join(out, 'theirs.json');
    fs.writeFileSync(theirs, 'x'.repeat(10_000));
    fs.chownSync(theirs, NOBODY, NOBODY);
    fs.chmodSync(theirs, 0o644);
    const other = join(out, 'hardlink.json');
    fs.linkSync(theirs, other);
    const ino = fs.statSync(theirs).ino;
    expect((await mint(theirs)).exitCode).toBe(0);
    const st = fs.statSync(theirs);
    expect({ ino: st.ino, uid: st.uid, gid: st.gid, mode: st.mode & 0o777, links: st.nlink }).toEqual({ ino, uid: NOBODY, gid: NOBODY, mode: 0o644, links: 2 });
    // Truncated first: nothing of the old content after the envelope.
    expect(isEnvelope(fs.readFileSync(other, 'utf8'))).toBe(true);
  });

  it('makes a new file 0600, whole; - and /dev/stdout are standard output; a missing directory or a directory is 5', async () => {
    const fresh = join(out, 'new.json');
    const made = await mint(fresh);
    expect(made.stdout).toMatch(/envelope written to /);
    expect(fs.statSync(fresh).mode & 0o777).toBe(0o600);
    expect(isEnvelope(fs.readFileSync(fresh, 'utf8'))).toBe(true);
    for (const target of ['-', '/dev/stdout']) {
      const run = await mint(target);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(isEnvelope(run.stdout)).toBe(true);
    }
    const quiet = await mint(join(out, 'quiet.json'), ['--quiet']);
    expect(quiet.stdout).toMatch(/^h_[0-9a-f]{24}\n$/);
    expect((await mint(join(out, 'no', 'such', 'dir.json'))).exitCode).toBe(5);
    expect((await mint(out)).exitCode).toBe(5);
  });
});
