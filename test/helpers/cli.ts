// Running the built bin/crux in tests: a fresh data dir per test, results as exit code + stdout + stderr.
import { execa, type Options } from 'execa';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

export const CRUX = resolve(__dirname, '../../bin/crux');

/** The environment every test process gets: no CA bundle (it costs ~42 ms a start), no inherited crux settings. */
export function testEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('CRUX_') || key === 'NODE_EXTRA_CA_CERTS' || key === 'NO_COLOR') delete env[key];
  return { ...env, ...extra };
}

export interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export function tempDir(prefix = 'crux-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A fresh, not yet existing data directory inside a new temp dir. */
export function freshDataDir(): string {
  return join(tempDir(), 'data');
}

export async function crux(dataDir: string, args: string[], opts: Options & { env?: Record<string, string | undefined> } = {}): Promise<Run> {
  const result = await execa(CRUX, ['--data-dir', dataDir, ...args], {
    reject: false,
    stripFinalNewline: false,
    ...opts,
    env: testEnv(opts.env),
    extendEnv: false,
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/**
 * Every file under `dir` with its mode and content hash: compare two snapshots to prove nothing changed. The
 * lock directory's contents (.lock/: sockets and holder files, which come and go with each writer) are the
 * lock's own state, not data: only the directory itself is recorded.
 */
export function snapshotDir(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!fs.existsSync(dir)) return out;
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      const st = fs.statSync(p);
      const mode = (st.mode & 0o777).toString(8);
      if (entry.isDirectory()) {
        out[`${relative(dir, p)}/`] = mode;
        if (!(d === dir && entry.name === '.lock')) walk(p);
      } else {
        out[relative(dir, p)] = `${mode} ${createHash('sha256').update(fs.readFileSync(p)).digest('hex')}`;
      }
    }
  };
  walk(dir);
  return out;
}
