// Shared machinery of the reliability suite: scaled iteration counts, killable crux processes, the store as
// replay sees it, and the figures the suite measures (appended to CRUX_FIGURES_FILE when set).
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { expect } from 'vitest';
import { join } from 'node:path';
import { DataDir } from '../../src/journal/dir/data-dir';
import { scanJournal } from '../../src/journal/codec/scan';
import { SESSION_STORE, type Sessions } from '../../src/domain/session/fold';
import { CRUX, STRESS, testEnv } from '../helpers/cli';
import { crux } from '../helpers/run-cli';

export { STRESS } from '../helpers/cli';
export const scaled = (normal: number, stress: number): number => (STRESS ? stress : normal);
/** Per-test time limit: the stress variants run for minutes. */
export const TIMEOUT = STRESS ? 1_200_000 : 120_000;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `done` every 50 ms until it holds; throws naming `what` after `ms`. */
export async function until(what: string, done: () => Promise<boolean>, ms = 20_000): Promise<void> {
  for (let waited = 0; !(await done()); waited += 50) {
    if (waited > ms) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A child whose end can be awaited and which can be SIGKILLed at any moment. */
export interface Child {
  readonly proc: ChildProcess;
  readonly done: Promise<Exit>;
}

function track(proc: ChildProcess): Child {
  let stdout = '';
  let stderr = '';
  proc.stdout?.on('data', (d) => (stdout += d));
  proc.stderr?.on('data', (d) => (stderr += d));
  const done = new Promise<Exit>((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { proc, done };
}

/** Starts `crux --data-dir <dir> …args` without waiting for it. */
export function startCrux(dataDir: string, args: string[], env: Record<string, string | undefined> = {}, input?: string): Child {
  const proc = spawn(CRUX, ['--data-dir', dataDir, ...args], { env: testEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  proc.stdin!.on('error', () => {});
  proc.stdin!.end(input ?? '');
  return track(proc);
}

/** Starts a shell script (bash) with $CRUX set to the binary, in its own process group (killable as one). */
export function startShell(script: string, env: Record<string, string | undefined> = {}): Child {
  const proc = spawn('bash', ['-c', script], { env: testEnv({ CRUX, ...env }), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  return track(proc);
}

/** SIGKILL a whole process group started by startShell. */
export function killGroup(child: Child): void {
  try {
    process.kill(-child.proc.pid!, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** The sessions as a full replay of the journal sees them: ground truth, no cache involved. */
export function readSessions(dataDir: string): Sessions {
  const state = SESSION_STORE.initial();
  scanJournal(join(dataDir, SESSION_STORE.file), SESSION_STORE.vocabulary, (record, at) => SESSION_STORE.evolve(state, record, at));
  return state;
}

/** What crux's own reads (through the replay caches, when valid) see must equal the ground truth. */
export async function expectCachedReadsAgree(dataDir: string): Promise<void> {
  const summary = (s: Sessions) => new Map([...s].map(([k, v]) => [k, `${v.status} ${v.state}`]));
  const cached = await new DataDir(dataDir, { warn: () => {} }, 10_000).read(SESSION_STORE);
  expect(summary(cached)).toEqual(summary(readSessions(dataDir)));
}

/**
 * `journal check --json` must say healthy: chain valid, seq contiguous, no torn tail, no bad line. Run in this
 * process (test/helpers/run-cli.ts): what it checks is the store the killed, raced or starved processes left, not
 * a process of its own; every caller has let go of the lock (its processes ended, `acquireLock`'s hold released).
 */
export async function expectHealthy(dataDir: string): Promise<any> {
  const check = await crux(dataDir, ['journal', 'check', '--json']);
  const report = JSON.parse(check.stdout || '{}');
  expect(
    report.journals?.flatMap((j: any) => j.problems.map((p: any) => `${j.name}:${p.line}: ${p.reason}`)),
    check.stderr,
  ).toEqual([]);
  expect(check.exitCode).toBe(0);
  expect(report.healthy).toBe(true);
  return report;
}

/** Every record of a journal file as parsed JSON (the file must be healthy). */
export function journalRecords(path: string): any[] {
  if (!fs.existsSync(path)) return [];
  return fs
    .readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/**
 * Records a measured figure: appended to $CRUX_FIGURES_FILE for docs/reliability.md, and printed under CRUX_STRESS
 * (the default run is quiet).
 */
export function figure(name: string, value: unknown): void {
  const line = JSON.stringify({ name, stress: STRESS, value, at: new Date().toISOString() });
  if (STRESS) console.info(`[figure] ${name}: ${JSON.stringify(value)}`);
  if (process.env.CRUX_FIGURES_FILE) fs.appendFileSync(process.env.CRUX_FIGURES_FILE, `${line}\n`);
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Runs `fn` over `items` with at most `limit` at a time. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i]!, i);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
