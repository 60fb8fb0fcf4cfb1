// A full disk (ENOSPC on a tiny tmpfs) and a file size limit (EFBIG from `ulimit -f`, a real short write):
// the failing command says the disk is full (exit 75, not 1), leaves no partial line, loses nothing.
//
// The tmpfs needs root (or a user namespace). This test does not skip: where it cannot mount, it fails and says so.
// The commands run in this process (run-cli.ts: a full disk is the program's to meet, not the process's), but the
// put under `ulimit -f` and the case bank's streamed snapshot (CRUX_TEST_STREAM_BYTES, a size a process reads).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freshDataDir, snapshotDir, crux as spawned, tempDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { expectCachedReadsAgree, expectHealthy, figure, readSessions, scaled, startShell, TIMEOUT } from './harness';

const mounted: string[] = [];

function mountTmpfs(size: string): string {
  const dir = tempDir('crux-tmpfs-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    throw new Error(
      `the full-disk test needs a tiny tmpfs and could not mount one (${String((error as { stderr?: Buffer }).stderr ?? error).trim()}); ` +
        'run the suite as root, or in a container/VM that allows `mount -t tmpfs`',
    );
  }
  mounted.push(dir);
  return dir;
}

function resize(dir: string, size: string): void {
  execFileSync('mount', ['-o', `remount,size=${size}`, dir]);
}

afterEach(() => {
  for (const dir of mounted.splice(0)) execFileSync('umount', ['-l', dir]);
});

/** A snapshot without cache/'s files: what a failed write must leave byte-identical. */
const journalFiles = (snapshot: Record<string, string>) =>
  Object.fromEntries(Object.entries(snapshot).filter(([name]) => !name.startsWith('cache/') || name === 'cache/'));

const state = (i: number, bytes: number) => JSON.stringify({ i, pad: 'y'.repeat(bytes) });

function expectDiskFull(run: { exitCode: number; stderr: string }): void {
  expect(run.exitCode, run.stderr).toBe(75);
  expect(run.stderr).toMatch(
    /^crux: (the disk is full|the file is too large for this file system): cannot write .* \((ENOSPC|EFBIG)\) \(nothing was written; free some space and retry\)\n$/,
  );
  expect(run.stderr).not.toMatch(/\n\s+at /);
}

describe('full disk (ENOSPC on a tiny tmpfs)', { timeout: TIMEOUT }, () => {
  it('fills the disk: the failing put exits 75, the data directory is byte-identical, nothing before is lost; after freeing space the retry succeeds', async () => {
    const rounds = scaled(2, 12);
    const failures: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const mount = mountTmpfs('64k');
      const dir = join(mount, 'data');
      const acked: { id: string; state: string }[] = [];
      const size = 3000 + Math.floor(Math.random() * 5000);
      let failed: { exitCode: number; stderr: string } | undefined;
      for (let i = 0; i < 40 && failed === undefined; i++) {
        const before = snapshotDir(dir);
        const run = await crux(dir, ['session', 'put', `s${i}`, state(i, size)]);
        if (run.exitCode === 0) acked.push({ id: `s${i}`, state: state(i, size) });
        else {
          failed = run;
          expectDiskFull(run);
          // The journal and everything beside it are byte-identical. cache/ may hold an index the command rebuilt
          // of the unchanged journal before its append failed (as any read may): derived, checked below by
          // expectCachedReadsAgree, never a difference in what is answered.
          expect(journalFiles(snapshotDir(dir))).toEqual(journalFiles(before));
          expect(fs.readFileSync(join(dir, 'sessions.jsonl')).at(-1)).toBe(0x0a);
        }
      }
      expect(failed, 'the tmpfs never filled up').toBeDefined();
      failures.push(acked.length);
      await expectHealthy(dir);
      await expectCachedReadsAgree(dir);
      const sessions = readSessions(dir);
      for (const { id, state: s } of acked) expect(sessions.get(id as never)?.state).toBe(s);
      // Safe to retry: with space again, the same command succeeds.
      resize(mount, '1m');
      const retry = await crux(dir, ['session', 'put', `s${acked.length}`, state(acked.length, size)]);
      expect(retry.exitCode, retry.stderr).toBe(0);
      await expectHealthy(dir);
    }
    figure('full-disk-enospc', { rounds, puts_before_full: failures, partial_lines_left: 0, lost: 0, exit_code: 75 });
  });

  it('a compaction, an import and a case record on a full disk exit 75 and change nothing', async () => {
    const mount = mountTmpfs('1m');
    const dir = join(mount, 'data');
    for (let i = 1; i <= 12; i++) expect((await crux(dir, ['session', 'put', `s${i % 3}`, state(0, 2000)])).exitCode).toBe(0);
    expect((await crux(dir, ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
    // Fill what is left of the disk.
    try {
      fs.writeFileSync(join(mount, 'filler'), Buffer.alloc(1 << 20));
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
    }
    const before = snapshotDir(dir);
    const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ session_id: `imp${i}`, state: { pad: 'z'.repeat(500) } }));
    const runs = [
      await crux(dir, ['journal', 'compact']),
      await crux(dir, ['session', 'import'], { input: `${lines.join('\n')}\n` }),
      // Bigger than a tmpfs page, so it cannot fit in the slack of the journal's last page.
      await crux(dir, ['case', 'record', '--task', 'deploy', '--action', 'x'.repeat(9000), '--outcome', 'o']),
    ];
    for (const run of runs) {
      expectDiskFull(run);
      expect(snapshotDir(dir)).toEqual(before);
    }
    fs.rmSync(join(mount, 'filler'));
    await expectHealthy(dir);
  });

  it('a case bank whose lost snapshot cannot be streamed for lack of space: the retrieve answers as a replay, leaves no scratch file', async () => {
    const mount = mountTmpfs('2m');
    const dir = join(mount, 'data');
    const lines = Array.from({ length: 1500 }, (_, i) =>
      JSON.stringify({ task: `deploy web step ${i} ${'w'.repeat(i % 40)}`, action: 'a', outcome: 'o', tags: [`t${i % 7}`] }),
    );
    expect((await crux(dir, ['case', 'import', '-'], { input: `${lines.join('\n')}\n` })).exitCode).toBe(0);
    const query = ['--json', 'case', 'retrieve', 'deploy', 'step', '--top-k', '30'];
    const want = await spawned(dir, query);
    fs.rmSync(join(dir, 'cache'), { recursive: true });
    fs.mkdirSync(join(dir, 'cache'), { mode: 0o700 });
    try {
      fs.writeFileSync(join(mount, 'filler'), Buffer.alloc(2 << 20));
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
    }
    const journal = fs.readFileSync(join(dir, 'cases.jsonl'));
    const got = await spawned(dir, query, { env: { CRUX_TEST_STREAM_BYTES: '1' } });
    expect(got.exitCode, got.stderr).toBe(0);
    expect(got.stdout).toBe(want.stdout);
    expect(fs.readFileSync(join(dir, 'cases.jsonl')).equals(journal)).toBe(true);
    expect(fs.readdirSync(join(dir, 'cache')).filter((n) => n.endsWith('.tmp') || /\.idx\.[0-9a-f]{8}$/.test(n))).toEqual([]);
    fs.rmSync(join(mount, 'filler'));
    const again = await spawned(dir, query, { env: { CRUX_TEST_STREAM_BYTES: '1' } });
    expect(again.stdout).toBe(want.stdout);
    expect(fs.existsSync(join(dir, 'cache', 'cases.jsonl.state'))).toBe(true);
  });

  it('a torn tail that cannot be quarantined for lack of space stays in place until there is room', async () => {
    const mount = mountTmpfs('1m');
    const dir = join(mount, 'data');
    expect((await crux(dir, ['session', 'put', 'a', '{"n":1}'])).exitCode).toBe(0);
    fs.appendFileSync(join(dir, 'sessions.jsonl'), '{"v":1,"seq":2,"ts":"2026-');
    try {
      fs.writeFileSync(join(mount, 'filler'), Buffer.alloc(1 << 20));
    } catch {
      // ENOSPC: the disk is now full.
    }
    const before = snapshotDir(dir);
    expectDiskFull(await crux(dir, ['session', 'put', 'b', '{"n":2}']));
    expect(snapshotDir(dir)).toEqual(before);
    fs.rmSync(join(mount, 'filler'));
    const put = await crux(dir, ['session', 'put', 'b', '{"n":2}']);
    expect(put.exitCode, put.stderr).toBe(0);
    expect(put.stderr).toContain('unterminated tail');
    await expectHealthy(dir);
    expect(readSessions(dir).get('a' as never)?.state).toBe('{"n":1}');
  });
});

describe('file size limit (EFBIG from ulimit -f: a real short write)', { timeout: TIMEOUT }, () => {
  it('the put that would cross the limit exits 75 and leaves the journal byte-identical', async () => {
    const rounds = scaled(3, 40);
    let shortWrites = 0;
    for (let r = 0; r < rounds; r++) {
      const dir = freshDataDir();
      for (let i = 1; i <= 2 + r; i++) expect((await crux(dir, ['session', 'put', `s${i}`, state(r, 700)])).exitCode).toBe(0);
      const journal = join(dir, 'sessions.jsonl');
      const size = fs.statSync(journal).size;
      // bash counts ulimit -f in 1024-byte blocks: allow the file to grow, but not by a whole 4 KiB record.
      const limitKiB = Math.floor(size / 1024) + 1;
      const before = snapshotDir(dir);
      const run = await startShell(`ulimit -f ${limitKiB}; exec "$CRUX" --data-dir '${dir}' session put big '${state(r, 4096)}'`).done;
      expectDiskFull({ exitCode: run.code ?? -1, stderr: run.stderr });
      expect(run.stderr).toContain('EFBIG');
      if (limitKiB * 1024 > size) shortWrites += 1;
      expect(snapshotDir(dir)).toEqual(before);
      await expectHealthy(dir);
      expect((await crux(dir, ['session', 'put', 'big', state(r, 4096)])).exitCode).toBe(0);
      expect(readSessions(dir).get('s1' as never)?.state).toBe(state(r, 700));
    }
    expect(shortWrites).toBeGreaterThan(0);
    figure('full-disk-efbig', { rounds, short_writes: shortWrites, partial_lines_left: 0, exit_code: 75 });
  });
});
