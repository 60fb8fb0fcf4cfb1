// The README's tour and docs/recipes.md's recipes work when pasted into a shell: each block marked
// `<!-- test: name -->` runs here.
import { execa, execaSync } from 'execa';
import * as fs from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CODES } from '../../src/shared/errors';
import { CRUX, crux, tempDir, testEnv } from '../helpers/cli';

const read = (path: string) => fs.readFileSync(resolve(__dirname, '../..', path), 'utf8');
const README = read('README.md');
const RECIPES = read('docs/recipes.md');
const ENVIRONMENT = read('docs/environment.md');

/** The fenced blocks that follow a `<!-- test: name -->` marker, by name, with the file each is in. */
export function runnableBlocks(files: Record<string, string>): Map<string, { file: string; lang: string; code: string }> {
  const blocks = new Map<string, { file: string; lang: string; code: string }>();
  for (const [file, markdown] of Object.entries(files)) {
    for (const m of markdown.matchAll(/<!-- test: ([\w-]+) -->\n```(\w+)\n([\s\S]*?)```/g)) {
      if (blocks.has(m[1]!)) throw new Error(`two blocks are named ${m[1]} (${blocks.get(m[1]!)!.file} and ${file})`);
      blocks.set(m[1]!, { file, lang: m[2]!, code: m[3]! });
    }
  }
  return blocks;
}

const blocks = runnableBlocks({ 'README.md': README, 'docs/recipes.md': RECIPES });
const block = (name: string) => {
  const found = blocks.get(name);
  if (found === undefined) throw new Error(`no block is marked <!-- test: ${name} -->`);
  return found;
};

/** A shell as a reader's would be: `crux` on PATH, a private HOME and TMPDIR, a fresh CRUX_DATA_DIR. */
function shellEnv(): { env: NodeJS.ProcessEnv; dataDir: string; cwd: string } {
  const home = tempDir('crux-readme-');
  const tmp = join(home, 'tmp');
  fs.mkdirSync(tmp);
  const dataDir = join(home, 'data');
  const env = testEnv({ PATH: `${dirname(CRUX)}:${process.env.PATH}`, HOME: home, TMPDIR: tmp, CRUX_DATA_DIR: dataDir, XDG_DATA_HOME: undefined });
  return { env, dataDir, cwd: home };
}

/** Whether this run may make PID namespaces (root, as CI is): skipped with that reason otherwise. */
function canUnsharePid(): boolean {
  try {
    return execaSync('unshare', ['--pid', '--fork', 'true'], { reject: false }).exitCode === 0;
  } catch {
    return false;
  }
}

const bash = (script: string, env: NodeJS.ProcessEnv, cwd: string) =>
  execa('bash', ['-c', script], { env, extendEnv: false, cwd, reject: false, stripFinalNewline: false });

const sessions = async (dataDir: string) => JSON.parse((await crux(dataDir, ['session', 'list', '--all', '--all-agents', '--json'])).stdout).sessions;

describe('README', () => {
  it('marks the tour (in the README) and every recipe (in docs/recipes.md) as runnable', () => {
    expect(Object.fromEntries([...blocks].map(([name, { file }]) => [name, file]))).toEqual({
      tour: 'README.md',
      crontab: 'docs/recipes.md',
      hook: 'docs/recipes.md',
      ci: 'docs/recipes.md',
    });
    expect(README).toContain('```sh\nnpm ci\nnpm test\n```');
  });

  it('says, in one line right before the tour, how to put crux on PATH', () => {
    const before = README.slice(0, README.indexOf('<!-- test: tour -->')).trimEnd().split('\n').at(-1);
    expect(before).toContain('`npm link`');
    expect(before).toContain('`export PATH="$PWD/bin:$PATH"`');
  });

  it('tour: runs start to end with `set -e`, every command succeeding and nothing on stderr', async () => {
    const { env, cwd } = shellEnv();
    const run = await bash(`set -euo pipefail\n${block('tour').code}`, env, cwd);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('closed session build-42');
    expect(run.stdout).toMatch(/similarity[\s\S]*rotate the TLS certificate/);
    expect(run.stdout).toContain('{"goal":"ship 1.2"}');
    expect(run.stdout).toMatch(/healthy/);
    // The tour keeps to its throwaway directory.
    // (and HOME's ~/.cache/crux/code, where another Node than the one that built crux keeps its code cache).
    expect(
      fs
        .readdirSync(cwd)
        .filter((name) => name !== '.cache')
        .sort(),
    ).toEqual(['tmp']);
  });

  it('crontab: a valid schedule every five minutes whose command reaps expired sessions and prints nothing', async () => {
    const lines = block('crontab')
      .code.split('\n')
      .filter((l) => l.trim() !== '' && !l.startsWith('#'));
    expect(lines).toHaveLength(1);
    const fields = lines[0]!.trim().split(/\s+/);
    expect(fields.slice(0, 5)).toEqual(['*/5', '*', '*', '*', '*']);
    const command = fields.slice(5).join(' ');
    const { env, dataDir, cwd } = shellEnv();
    await crux(dataDir, ['session', 'put', 'lease', '{}', '--ttl', '1m', '--now', '2026-01-01T00:00:00Z']);
    await crux(dataDir, ['session', 'put', 'live', '{}', '--ttl', '100w']);
    const run = await bash(command, env, cwd);
    expect({ exitCode: run.exitCode, stdout: run.stdout, stderr: run.stderr }).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    const byId = Object.fromEntries((await sessions(dataDir)).map((s: { session_id: string; status: string }) => [s.session_id, s.status]));
    expect(byId).toEqual({ lease: 'closed', live: 'active' });
    // Nothing to reap is success too.
    expect(await bash(command, env, cwd)).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });
  });

  it('hook: records a session at start and closes it at exit, completed or failed', async () => {
    for (const [ending, outcome] of [
      ['true', 'completed'],
      ['false', 'failed'],
      ['exit 3', 'failed'],
    ] as const) {
      const { env, dataDir, cwd } = shellEnv();
      const run = await bash(`${block('hook').code}\necho "working as $session_id"\n${ending}\n`, env, cwd);
      expect(run.stderr, ending).toBe('');
      const id = /working as (job-\d+-[0-9a-f]{8})/.exec(run.stdout)?.[1];
      expect(id, ending).toBeDefined();
      const all = await sessions(dataDir);
      expect(all, ending).toHaveLength(1);
      expect(all[0], ending).toMatchObject({ session_id: id, status: 'closed', outcome });
    }
  });

  it('hook: a job stopped by Ctrl-C (SIGINT to its process group, as a terminal sends it) or a kill of its process group is closed as abandoned', async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const { env, dataDir, cwd } = shellEnv();
      // The job works in a foreground child (as jobs do), in a process group of its own, like a terminal's job.
      // The child says it runs only once it is a process of its own: a signal sent between the shell's fork and
      // the child's exec would reach the fork while it still has the shell's traps, be lost at the exec, and
      // leave the job waiting for a child that never got it.
      const job = execa(
        'bash',
        ['-c', `${block('hook').code}\necho "working as $session_id"\nbash -c 'echo "child running"; exec sleep 60'\necho "not reached"\n`],
        {
          env,
          extendEnv: false,
          cwd,
          reject: false,
          detached: true,
        },
      );
      const id = await new Promise<string>((resolve, reject) => {
        let seen = '';
        job.stdout!.on('data', (chunk: Buffer) => {
          seen += String(chunk);
          const m = /working as (job-\d+-[0-9a-f]{8})\nchild running\n/.exec(seen);
          if (m) resolve(m[1]!);
        });
        job.once('exit', () => reject(new Error(`the job ended before it started working: ${seen}`)));
      });
      // A terminal's Ctrl-C goes to the whole foreground process group, as `kill -TERM -- -PGID` (timeout, systemd) does.
      process.kill(-job.pid!, signal);
      const run = await job;
      expect(String(run.stdout), signal).not.toContain('not reached');
      const all = await sessions(dataDir);
      expect(all, signal).toHaveLength(1);
      expect(all[0], signal).toMatchObject({ session_id: id, status: 'closed', outcome: 'abandoned' });
    }
  });

  it.skipIf(!canUnsharePid())('hook: two jobs with the same PID (each PID 1 of its own PID namespace) are two sessions', async () => {
    const { env, dataDir, cwd } = shellEnv();
    for (let i = 0; i < 2; i++) {
      const run = await execa('unshare', ['--pid', '--fork', '--', 'bash', '-c', `${block('hook').code}\necho "working as $session_id"\n`], {
        env,
        extendEnv: false,
        cwd,
        reject: false,
      });
      expect(run.stderr).toBe('');
      expect(String(run.stdout)).toMatch(/working as job-1-[0-9a-f]{8}/);
    }
    const all = await sessions(dataDir);
    expect(all.map((s: { status: string }) => s.status)).toEqual(['closed', 'closed']);
    expect(new Set(all.map((s: { session_id: string }) => s.session_id)).size).toBe(2);
  });

  it('ci: passes on healthy journals and fails the build on a damaged one', async () => {
    const { env, dataDir, cwd } = shellEnv();
    await crux(dataDir, ['session', 'put', 'a', '{}']);
    await crux(dataDir, ['session', 'put', 'b', '{}']);
    const ok = await bash(block('ci').code, env, cwd);
    expect(ok.exitCode).toBe(0);
    expect(JSON.parse(fs.readFileSync(join(cwd, 'crux-journal-check.json'), 'utf8')).healthy).toBe(true);

    const journal = join(dataDir, 'sessions.jsonl');
    fs.writeFileSync(journal, fs.readFileSync(journal, 'utf8').replace('"a"', '"A"'));
    const damaged = await bash(block('ci').code, env, cwd);
    expect(damaged.exitCode).toBe(1);
    expect(damaged.stderr).toContain('a journal is damaged');
    expect(JSON.parse(fs.readFileSync(join(cwd, 'crux-journal-check.json'), 'utf8')).healthy).toBe(false);
  });

  it('has an environment table (docs/environment.md) naming every variable crux(1) documents', () => {
    const man = fs.readFileSync(resolve(__dirname, '../../man/crux.1'), 'utf8');
    const section = man.slice(man.indexOf('.SH ENVIRONMENT'), man.indexOf('.SH', man.indexOf('.SH ENVIRONMENT') + 4));
    const documented = new Set([...section.matchAll(/\b((?:CRUX|XDG)_[A-Z_]+|NO_COLOR|FORCE_COLOR|COLUMNS|HOME)\b/g)].map((m) => m[1]!));
    const start = ENVIRONMENT.indexOf('## crux itself');
    const table = ENVIRONMENT.slice(start, ENVIRONMENT.indexOf('\n## ', start + 3));
    expect(start).toBeGreaterThan(-1);
    expect(documented.size).toBeGreaterThan(20);
    for (const name of documented) expect(table, name).toContain(name.startsWith('CRUX_TEST_') ? '`CRUX_TEST_*`' : `\`${name}\``);
  });

  it('has the whole exit-code table, and links to the pages of the reliability and performance figures', () => {
    for (const code of new Set(Object.values(EXIT_CODES))) expect(README, `exit ${code}`).toMatch(new RegExp(`^\\| ${code} \\| \\S`, 'm'));
    expect(read('docs/reliability.md')).toMatch(/^# Reliability$/m);
    expect(read('docs/performance.md')).toMatch(/^# Performance$/m);
    expect(README).toContain('(docs/reliability.md)');
    expect(README).toContain('(docs/performance.md)');
  });
});
