// The full program run in-process (src/cli/program-run.ts), for tests whose subject is what a command does and
// prints, not the process: the same answer as `crux()` of cli.ts (exit code, stdout and stderr as bytes), without
// a Node start per command. Standard streams are in memory (src/output/stdout.ts: redirectStdio), the environment
// is the one a spawned crux gets (testEnv), and commands run one at a time (process.env and the streams are the
// process's). What only a process shows stays spawned: the launcher and its fast bundles (e2e/fast-path,
// e2e/launcher), signals, closed pipes, code caches, kill -9, processes racing for the lock.
import type { Options } from 'execa';
import Module from 'node:module';
import { resolve } from 'node:path';
import { configureCipher } from '../../src/journal/codec/cipher';
import { redirectStdio } from '../../src/output/stdout';
import { CRUX, type Run, crux as spawned, storeArgs, testEnv } from './cli';

let queue: Promise<unknown> = Promise.resolve();
let loaded: Promise<typeof import('../../src/cli/program-run')> | undefined;

/**
 * The program, and the PostgreSQL engine it requires only when a command names such a store (src/cli/store.ts:
 * `require('./store-pg')`, which esbuild bundles): Node's require cannot load TypeScript, so the engine is the
 * instance of this test's module graph, put in require's cache under its file.
 */
function load(): Promise<typeof import('../../src/cli/program-run')> {
  loaded ??= (async () => {
    const storePg = await import('../../src/cli/store-pg');
    const file = resolve(__dirname, '../../src/cli/store-pg.ts');
    const loader = Module as unknown as { _extensions: Record<string, unknown>; _cache: Record<string, unknown> };
    // A `.ts` extension known, so that require('./store-pg') resolves to the file; never loaded by require itself.
    loader._extensions['.ts'] ??= () => {
      throw new Error('run-cli: a TypeScript module required outside the test module graph');
    };
    loader._cache[file] = { id: file, filename: file, loaded: true, exports: storePg, children: [], paths: [] };
    return import('../../src/cli/program-run');
  })();
  return loaded;
}

/** Runs `fn` after every run queued before it, whatever became of them. */
function serially<T>(fn: () => Promise<T>): Promise<T> {
  const next = queue.then(fn, fn);
  queue = next.catch(() => undefined);
  return next;
}

/** `crux [store args] …args` in this process: `{ env, input, cwd }` as for a spawned crux. */
export function runCli(args: string[], opts: { env?: Record<string, string | undefined>; input?: string | Uint8Array; cwd?: string } = {}): Promise<Run> {
  return serially(async () => {
    const { main } = await load();
    const saved = { ...process.env };
    const cwd = process.cwd();
    const stdout: Uint8Array[] = [];
    const stderr: Uint8Array[] = [];
    for (const key of Object.keys(process.env)) delete process.env[key];
    // A variable given as undefined is unset, as execa's env does (process.env would store the string "undefined").
    for (const [key, value] of Object.entries(testEnv(opts.env))) if (value !== undefined) process.env[key] = value;
    if (opts.cwd !== undefined) process.chdir(opts.cwd);
    const input = opts.input === undefined ? new Uint8Array() : typeof opts.input === 'string' ? Buffer.from(opts.input) : opts.input;
    redirectStdio({ stdout: (b) => stdout.push(b), stderr: (b) => stderr.push(b), stdin: input });
    let exitCode: number;
    try {
      exitCode = await main(['node', CRUX, ...args]);
    } finally {
      redirectStdio(undefined);
      if (opts.cwd !== undefined) process.chdir(cwd);
      for (const key of Object.keys(process.env)) delete process.env[key];
      Object.assign(process.env, saved);
      // The command's key and store (cli/store-cipher.ts) are the process's too: a later write of this module graph
      // (a unit file of SHARED_GRAPH) must not seal with them, nor be refused for want of them.
      configureCipher({ key: undefined, mode: () => ({ kind: 'plain' }) });
    }
    return { exitCode, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') };
  });
}

/**
 * What only a process does with its environment: a crash point kills the process that reads it
 * (src/shared/crash-point.ts), a lock held for a while is there for another process to meet, NODE_OPTIONS is read
 * by Node at start. A command given one of them runs as a process.
 */
const PROCESS_ENV = ['CRUX_TEST_CRASH_AT', 'CRUX_TEST_TORN_WRITE', 'CRUX_TEST_LOCK_HOLD_MS', 'NODE_OPTIONS'];

/**
 * `crux()` of cli.ts, in-process: a drop-in for the files whose subject is not the process. A command whose
 * environment only a process honours (PROCESS_ENV), or bounded by a timeout (a command that blocks this thread
 * could not be ended), is spawned as bin/crux.
 */
export function crux(store: string, args: string[], opts: Options & { env?: Record<string, string | undefined> } = {}): Promise<Run> {
  if (opts.timeout !== undefined || PROCESS_ENV.some((name) => opts.env?.[name] !== undefined)) return spawned(store, args, opts);
  const input = typeof opts.input === 'string' || opts.input instanceof Uint8Array ? opts.input : undefined;
  if (opts.input !== undefined && input === undefined) throw new Error('runCli: input must be a string or bytes');
  const cwd = typeof opts.cwd === 'string' ? opts.cwd : opts.cwd === undefined ? undefined : String(opts.cwd);
  return runCli([...storeArgs(store), ...args], { ...(opts.env ? { env: opts.env } : {}), ...(input !== undefined ? { input } : {}), ...(cwd ? { cwd } : {}) });
}
