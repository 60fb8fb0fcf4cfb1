// Failures of the environment have their codes, never 1 (SPEC §3): permission denied → 5 naming the path; a full
// disk → 75; a rewrite keeps the journal's owner, group and mode; output that cannot be written after a committed
// write → 0 and one stderr line. Needs root (another uid, a tmpfs): where it cannot, it fails and says so. The
// commands that set a store up, and root's own, run in this process (run-cli.ts); another user's are processes, and
// so are the writes whose standard output is a full device or a closed pipe.
import { execa } from 'execa';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CRUX, freshDataDir, snapshotDir, tempDir, testEnv, type Run } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { expectHealthy, figure, readSessions, TIMEOUT } from './harness';
import { otherUserSkipReason, titled } from '../helpers/tools';

const NOBODY = 65534;

/** crux as another user (uid and gid `uid`, no supplementary groups). */
async function cruxAs(uid: number, dataDir: string, args: string[], input?: string): Promise<Run> {
  const run = await execa('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', CRUX, '--data-dir', dataDir, ...args], {
    reject: false,
    stripFinalNewline: false,
    env: testEnv({ HOME: '/tmp' }),
    extendEnv: false,
    ...(input === undefined ? {} : { input }),
  });
  return { exitCode: run.exitCode ?? -1, stdout: String(run.stdout), stderr: String(run.stderr) };
}

/** A data directory with a session, a case, a handoff key and a torn-free journal of each kind. */
async function populated(): Promise<string> {
  const dir = freshDataDir();
  for (const args of [
    ['session', 'put', 'a', '{"n":1}'],
    ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o'],
    ['--agent', 'x', 'session', 'put', 'h', '{}'],
  ])
    expect((await crux(dir, args)).exitCode).toBe(0);
  return dir;
}

const COMMANDS: string[][] = [
  ['session', 'get', 'a'],
  ['session', 'list'],
  ['session', 'put', 'b', '{}'],
  ['session', 'close', 'a'],
  ['session', 'reap'],
  ['case', 'list'],
  ['case', 'retrieve', 't'],
  ['case', 'record', '--task', 't2', '--action', 'a', '--outcome', 'o'],
  ['handoff', 'list'],
  ['journal', 'check'],
  ['journal', 'compact'],
  ['doctor'],
];

function expectPermissionDenied(run: Run, path: string, what: string): void {
  expect(run.exitCode, `${what}: ${run.stderr}`).toBe(5);
  expect(run.stderr, what).toContain(`permission denied: ${path}`);
  expect(run.stderr, what).not.toMatch(/internal error|this is a bug/);
  expect(run.stderr.split('\n').filter(Boolean), what).toHaveLength(1);
}

const mounted: string[] = [];
afterEach(() => {
  for (const dir of mounted.splice(0)) execFileSync('umount', ['-l', dir]);
});

const nobodySkip = otherUserSkipReason(CRUX);

describe.skipIf(nobodySkip !== undefined)(titled('permission denied', nobodySkip), { timeout: TIMEOUT }, () => {
  it('a data directory another user owns (0700): every command exits 5 naming a path in it, and nothing changes', async () => {
    const dir = await populated();
    const before = snapshotDir(dir);
    for (const args of COMMANDS) {
      const run = await cruxAs(NOBODY, dir, args);
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(5);
      expect(run.stderr, args.join(' ')).toMatch(new RegExp(`^crux: permission denied: ${dir}(/[^ ]+)? \\(EACCES\\)`));
    }
    expect(snapshotDir(dir)).toEqual(before);
    figure('eacces-data-dir', { commands: COMMANDS.length, exit_5: COMMANDS.length });
  });

  it('a journal another user cannot read, in a directory it can: 5 naming that journal', async () => {
    const dir = await populated();
    fs.chmodSync(join(dir, '..'), 0o755);
    fs.chmodSync(dir, 0o755);
    const journal = join(dir, 'sessions.jsonl');
    const before = snapshotDir(dir);
    for (const args of [
      ['session', 'get', 'a'],
      ['session', 'list'],
      ['case', 'list'],
    ]) {
      expectPermissionDenied(await cruxAs(NOBODY, dir, args), args[0] === 'case' ? join(dir, 'cases.jsonl') : journal, args.join(' '));
    }
    // A writer meets root's lock before the journal: it names that.
    expectPermissionDenied(await cruxAs(NOBODY, dir, ['session', 'put', 'b', '{}']), dir, 'session put');
    // A check needs only read access (SPEC §3): it goes on without the lock, says so, and then names the journal.
    const check = await cruxAs(NOBODY, dir, ['journal', 'check']);
    expect(check.exitCode).toBe(5);
    expect(check.stderr.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/\.lock \(EACCES\): verified without the writers' lock, so a live writer could race this check$/),
      expect.stringContaining(`permission denied: ${journal}`),
    ]);
    expect(snapshotDir(dir)).toEqual(before);
  });
});

describe.skipIf(nobodySkip !== undefined)(titled('a rewrite keeps owner, group and mode', nobodySkip), { timeout: TIMEOUT }, () => {
  it("root's compaction and repair of another user's journals: the owner keeps them and can still write", async () => {
    const parent = tempDir();
    fs.chownSync(parent, NOBODY, NOBODY);
    const dir = join(parent, 'data');
    // The owner's 30 puts, written here and handed to nobody (as nobody's own writes leave the files).
    for (let i = 0; i < 30; i++) expect((await crux(dir, ['session', 'put', `s${i % 3}`, `{"i":${i}}`])).exitCode).toBe(0);
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, dir]);
    const journal = join(dir, 'sessions.jsonl');
    fs.chmodSync(journal, 0o640);
    const owned = () => {
      const st = fs.statSync(journal);
      return { uid: st.uid, gid: st.gid, mode: (st.mode & 0o777).toString(8) };
    };
    expect(owned()).toEqual({ uid: NOBODY, gid: NOBODY, mode: '640' });
    const compact = await crux(dir, ['--json', 'journal', 'compact']);
    expect(compact.exitCode, compact.stderr).toBe(0);
    expect(JSON.parse(compact.stdout).journals[0].after.records).toBe(4);
    expect(owned()).toEqual({ uid: NOBODY, gid: NOBODY, mode: '640' });
    // A second compaction archives a copy (without the restatements the first history file repeats): the owner's too.
    expect((await cruxAs(NOBODY, dir, ['session', 'put', 's0', '{"i":30}'])).exitCode).toBe(0);
    expect((await crux(dir, ['journal', 'compact'])).exitCode).toBe(0);
    const history = fs.readdirSync(join(dir, 'history'));
    expect(history).toHaveLength(2);
    for (const name of history) expect(fs.statSync(join(dir, 'history', name)).uid, name).toBe(NOBODY);
    expect(owned()).toEqual({ uid: NOBODY, gid: NOBODY, mode: '640' });
    // A bad line, repaired by root: the same.
    fs.appendFileSync(journal, 'garbage\n');
    const repair = await crux(dir, ['journal', 'check', '--repair']);
    expect(repair.exitCode, repair.stderr).toBe(0);
    expect(owned()).toEqual({ uid: NOBODY, gid: NOBODY, mode: '640' });
    // What root created on the way (quarantine/, cache files) belongs to the owner too: the owner is not locked out.
    for (const entry of fs.readdirSync(dir)) expect(fs.statSync(join(dir, entry)).uid, entry).toBe(NOBODY);
    const put = await cruxAs(NOBODY, dir, ['session', 'put', 'after', '{}']);
    expect(put.exitCode, put.stderr).toBe(0);
    expect((await cruxAs(NOBODY, dir, ['journal', 'check'])).exitCode).toBe(0);
    expect(readSessions(dir).get('s2' as never)?.state).toBe('{"i":29}');
    expect(readSessions(dir).get('s0' as never)?.state).toBe('{"i":30}');
  });
});

describe('full disk', { timeout: TIMEOUT }, () => {
  it('handoff mint when the key file cannot be created: 75, nothing changed, no empty keys/', async () => {
    const mount = tempDir('crux-tmpfs-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0755', 'tmpfs', mount]);
    mounted.push(mount);
    const dir = join(mount, 'data');
    expect((await crux(dir, ['--agent', 'x', 'session', 'put', 'h', '{}'])).exitCode).toBe(0);
    try {
      fs.writeFileSync(join(mount, 'filler'), Buffer.alloc(1 << 20));
    } catch {
      // ENOSPC: full now.
    }
    // Inodes too: a tmpfs with room for no new file.
    const before = snapshotDir(dir);
    const mint = await crux(dir, ['--agent', 'x', 'handoff', 'mint', 'h']);
    expect(mint.exitCode, mint.stderr).toBe(75);
    expect(mint.stderr).toMatch(/^crux: the disk is full: cannot write .*keys.* \(ENOSPC\)/);
    expect(snapshotDir(dir)).toEqual(before);
    expect(fs.existsSync(join(dir, 'keys'))).toBe(false);
    fs.rmSync(join(mount, 'filler'));
    const retry = await crux(dir, ['--agent', 'x', 'handoff', 'mint', 'h']);
    expect(retry.exitCode, retry.stderr).toBe(0);
    await expectHealthy(dir);
  });

  it.skipIf(nobodySkip !== undefined)(
    titled('handoff mint --out into a file or directory the user may not write: 5 before anything is minted', nobodySkip),
    async () => {
      const parent = tempDir();
      fs.chownSync(parent, NOBODY, NOBODY);
      const dir = join(parent, 'data');
      expect((await cruxAs(NOBODY, dir, ['--agent', 'x', 'session', 'put', 'h', '{}'])).exitCode).toBe(0);
      // root's, readable and searchable by everyone, writable by root alone.
      const locked = tempDir();
      fs.chmodSync(locked, 0o755);
      fs.writeFileSync(join(locked, 'theirs.json'), 'kept\n', { mode: 0o644 });
      const before = snapshotDir(dir);
      for (const target of [join(locked, 'theirs.json'), join(locked, 'new.json')]) {
        const mint = await cruxAs(NOBODY, dir, ['--agent', 'x', 'handoff', 'mint', 'h', '--out', target]);
        expect(mint.exitCode, mint.stderr).toBe(5);
        expect(mint.stderr).toMatch(/^crux: permission denied: .* \(EACCES\)/);
        expect(snapshotDir(dir)).toEqual(before);
      }
      expect(fs.readFileSync(join(locked, 'theirs.json'), 'utf8')).toBe('kept\n');
      expect(fs.readdirSync(locked)).toEqual(['theirs.json']);
    },
  );

  it('handoff mint --out onto a full disk after the mint committed: exit 0, one line naming the export, minted once', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['--agent', 'x', 'session', 'put', 'h', '{}'])).exitCode).toBe(0);
    const mount = tempDir('crux-tmpfs-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0755', 'tmpfs', mount]);
    mounted.push(mount);
    try {
      fs.writeFileSync(join(mount, 'filler'), Buffer.alloc(1 << 20));
    } catch {
      // ENOSPC: full now.
    }
    const out = join(mount, 'pkg.json');
    for (const quiet of [false, true]) {
      // In this process, after the put above and the mint before: what the line says was committed is this
      // command's own (each run of the program starts with nothing committed, src/cli/program-run.ts).
      const mint = await crux(dir, [...(quiet ? ['--quiet'] : []), '--agent', 'x', 'handoff', 'mint', 'h', '--out', out]);
      expect(mint.exitCode, mint.stderr).toBe(0);
      const lines = mint.stderr.split('\n').filter(Boolean);
      expect(lines).toHaveLength(1);
      const id = /`crux handoff export (h_[0-9a-f]+) --out /.exec(lines[0]!)?.[1];
      expect(lines[0]).toMatch(
        /^crux: committed \(minted handoff h_[0-9a-f]+; 1 record\(s\) to handoffs\.jsonl, 1 record\(s\) to sessions\.jsonl\), but --out could not be written: the disk is full: .*\(ENOSPC\).* do not repeat it/,
      );
      expect(lines[0]).toContain(`committed (minted handoff ${id}; `);
      // Under --quiet the new id still goes to stdout (it was created); otherwise nothing claims the file was written.
      expect(mint.stdout).toBe(quiet ? `${id}\n` : '');
      expect(fs.readdirSync(mount)).toEqual(['filler']);
    }
    const listed = JSON.parse((await crux(dir, ['--agent', 'x', '--json', 'handoff', 'list'])).stdout).handoffs;
    expect(listed).toHaveLength(2);
    // With room again, the export the line names writes the envelope.
    fs.rmSync(join(mount, 'filler'));
    const again = await crux(dir, ['--agent', 'x', 'handoff', 'export', listed[0].handoff_id, '--out', out]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(out, 'utf8')).content_hash).toBe(listed[0].content_hash);
  });
});

describe('output that cannot be written after a committed write', { timeout: TIMEOUT }, () => {
  it.skipIf(nobodySkip !== undefined)(
    titled('an automatic compaction that cannot run (history/ unreadable) after a committed put: exit 0, one warning, compacted later', nobodySkip),
    async () => {
      const parent = tempDir();
      fs.chownSync(parent, NOBODY, NOBODY);
      const dir = join(parent, 'data');
      // 16 KiB puts of one session: the journal crosses the 256 KiB threshold, mostly dead, so a put compacts after it
      // commits. The store and the first 8 (128 KiB) written here and handed to nobody; then nobody's own puts.
      const big = JSON.stringify({ pad: 'x'.repeat(16 * 1024) });
      const FIRST = 8;
      for (const v of [1, 2]) expect((await crux(dir, ['session', 'put', 'small', `{"v":${v}}`])).exitCode).toBe(0);
      expect((await crux(dir, ['journal', 'compact'])).exitCode).toBe(0);
      for (let i = 0; i < FIRST; i++) expect((await crux(dir, ['session', 'put', 'big', big.replace('{', `{"i":${i},`)])).exitCode).toBe(0);
      expect(fs.readdirSync(join(dir, 'history')), 'compacted before nobody wrote').toHaveLength(1);
      execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, dir]);
      fs.chmodSync(join(dir, 'history'), 0o000);
      let warned: Run | undefined;
      for (let i = FIRST; i < 20 && warned === undefined; i++) {
        const put = await cruxAs(NOBODY, dir, ['session', 'put', 'big', big.replace('{', `{"i":${i},`)]);
        expect(put.exitCode, put.stderr).toBe(0);
        if (put.stderr !== '') warned = { ...put, stdout: String(i) };
      }
      expect(warned, 'no put ran an automatic compaction').toBeDefined();
      expect(warned!.stderr).toMatch(
        /^crux: sessions\.jsonl: the write is committed, but its automatic compaction did not run: permission denied: .*history \(EACCES\)[^\n]*\n$/,
      );
      expect(readSessions(dir).get('big' as never)?.state).toBe(big.replace('{', `{"i":${warned!.stdout},`));
      fs.chmodSync(join(dir, 'history'), 0o700);
      expect((await cruxAs(NOBODY, dir, ['journal', 'check'])).exitCode).toBe(0);
      const compact = JSON.parse((await cruxAs(NOBODY, dir, ['--json', 'journal', 'compact'])).stdout);
      expect(compact.journals[0].after.records).toBe(3);
    },
  );

  it('> /dev/full: exit 0, the effect durable, one stderr line saying what was done', async () => {
    const dir = freshDataDir();
    const run = await execa('bash', ['-c', `"$CRUX" --data-dir '${dir}' case record --task deploy --action a --outcome o > /dev/full`], {
      reject: false,
      env: testEnv({ CRUX }),
      extendEnv: false,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const lines = String(run.stderr).split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    // The line names the case it recorded: the one thing a caller whose output was lost needs.
    const said =
      /^crux: committed \(recorded case (c_[0-9a-f]+); 1 record\(s\) to cases.jsonl\), but its output could not be written \(ENOSPC\): the write is durable, do not repeat it$/.exec(
        lines[0]!,
      );
    expect(said, lines[0]).not.toBeNull();
    expect(JSON.parse((await crux(dir, ['--json', 'case', 'list'])).stdout).cases.map((c: any) => [c.case_id, c.task])).toEqual([[said![1], 'deploy']]);
    // A query whose output cannot be written changed nothing: it fails (75), and says so once.
    const query = await execa('bash', ['-c', `"$CRUX" --data-dir '${dir}' case list > /dev/full`], { reject: false, env: testEnv({ CRUX }), extendEnv: false });
    expect(query.exitCode).toBe(75);
    expect(String(query.stderr)).toMatch(/^crux: cannot write standard output \(ENOSPC\)/);
  });

  it('a reader that is gone (| (exec 0<&-; true)): exit 0, the close durable, one stderr line', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 'a', '{}'])).exitCode).toBe(0);
    const run = await execa('bash', ['-c', `"$CRUX" --data-dir '${dir}' session close a | (exec 0<&-; true); exit \${PIPESTATUS[0]}`], {
      reject: false,
      env: testEnv({ CRUX }),
      extendEnv: false,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(String(run.stderr), String(run.stderr)).toMatch(
      /^crux: committed \(1 record\(s\) to sessions.jsonl\), but its output could not be written \(EPIPE\)[^\n]*$/,
    );
    expect(readSessions(dir).get('a' as never)?.status).toBe('closed');
    // A query into a closed pipe stays quiet, as `crux … | head` should.
    const query = await execa('bash', ['-c', `"$CRUX" --data-dir '${dir}' session list --all | (exec 0<&-; true); exit \${PIPESTATUS[0]}`], {
      reject: false,
      env: testEnv({ CRUX }),
      extendEnv: false,
    });
    expect(query.exitCode).toBe(0);
    expect(String(query.stderr)).toBe('');
  });
});

describe('journal mtimes', () => {
  it('are the time of the write: never ahead of the clock, never running backwards', async () => {
    const dir = freshDataDir();
    const journal = join(dir, 'sessions.jsonl');
    let previous = 0n;
    for (let i = 0; i < 8; i++) {
      expect((await crux(dir, ['session', 'put', `s${i}`, '{}'])).exitCode).toBe(0);
      const mtime = fs.statSync(journal, { bigint: true }).mtimeNs;
      expect(mtime <= BigInt(Date.now()) * 1_000_000n + 1_000_000n, `put ${i}`).toBe(true);
      expect(mtime >= previous, `put ${i}`).toBe(true);
      previous = mtime;
    }
  });
});
