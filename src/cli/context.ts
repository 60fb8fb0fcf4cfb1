// Everything a command needs from its invocation, resolved once: data dir, identities, clock, output mode.
import { fs } from '../shared/fs';
import type { Command } from 'commander';
import { openStore, resolveStore, type StoreSource } from './store';
import { setUpCipher } from './store-cipher';
import type { JournalStore } from '../journal/core/store-boundary';
import type { WorkPhase } from '../journal/dir/load';
import { stdioInMemory, writeStderr } from '../output/stdout';
import type { JournalWarning } from '../output/emit';
import { isTerminal, stdoutIsTerminal, wantsColor, type ColorWhen } from '../output/terminal';
import { DEFAULT_LOCK_TIMEOUT_MS } from '../journal/dir/lock/lock';
import { DEFAULT_HISTORY_RETENTION, type HistoryRetention } from '../journal/dir/history';
import { envCount } from './parse';
import { invalid } from '../shared/errors';
import { keptText } from '../shared/free-text';
import { parseActorName, parseAgentName, type ActorName, type AgentName } from '../shared/ids';
import { formatTime, parseDuration, parseTime, type Instant } from '../shared/time';

/** Where the store's name came from: --data-dir or --store, their variables, XDG_DATA_HOME, or the default. */

export interface GlobalOptions {
  dataDir?: string;
  store?: string;
  /** `--key-file <file>`: the store key (SPEC §13; env CRUX_KEY_FILE). */
  keyFile?: string;
  agent?: string;
  actor?: string;
  json?: boolean;
  now?: string;
  quiet?: boolean;
  /** `--color <when>`, or false for `--no-color`. */
  color?: ColorWhen | boolean;
}

export interface Context {
  /** The store every command works on: a data directory or a PostgreSQL database (journal/core/store-boundary.ts). */
  readonly dataDir: JournalStore;
  readonly dataDirSource: StoreSource;
  /** Why that store was chosen, for doctor (`from --store, which overrides CRUX_DATA_DIR`). */
  readonly storeWhy: string | undefined;
  readonly agent: AgentName | undefined;
  readonly actor: ActorName | undefined;
  readonly json: boolean;
  readonly quiet: boolean;
  readonly color: boolean;
  /** The current time: --now / CRUX_NOW, else the clock, read once per invocation. */
  readonly now: Instant;
  readonly nowIso: string;
  readonly env: NodeJS.ProcessEnv;
  /** Damaged journal lines the reads of this invocation passed over, each once (--json documents carry them). */
  readonly warnings: JournalWarning[];
  /** How long a write waits for the writers' lock (CRUX_LOCK_TIMEOUT), for stores a command opens itself. */
  readonly lockTimeoutMs: number;
  warn(message: string): void;
  /** Hears how far the writes of this invocation have come (an import's progress line) until the returned stop. */
  onWork(listener: ((phase: WorkPhase, done: number, total: number) => void) | undefined): () => void;
}

/** CRUX_HISTORY_KEEP (a duration) and CRUX_HISTORY_MAX_BYTES: how long and how much of history/ compaction keeps. */
function historyRetention(env: NodeJS.ProcessEnv): HistoryRetention {
  return {
    keepMs: env.CRUX_HISTORY_KEEP ? parseDuration(env.CRUX_HISTORY_KEEP, 'CRUX_HISTORY_KEEP') : DEFAULT_HISTORY_RETENTION.keepMs,
    maxBytes: envCount(env, 'CRUX_HISTORY_MAX_BYTES', DEFAULT_HISTORY_RETENTION.maxBytes)!,
  };
}

export function buildContext(command: Command, env: NodeJS.ProcessEnv = process.env): Context {
  return contextOf(command.optsWithGlobals<GlobalOptions>(), env);
}

/**
 * Every problem this process's command passed over (its contexts', each once): its `--json` refusal carries them
 * as a document that answered would (SPEC §8). program-run.ts takes them; a server answers from its own contexts.
 */
const passedOver = new Map<string, JournalWarning>();

/** The problems passed over since the last take, and none kept. */
export function takePassedOver(): JournalWarning[] {
  const all = [...passedOver.values()];
  passedOver.clear();
  return all;
}

/**
 * A context from parsed global options: `crux mcp` makes one per tool call, so each reads the clock anew. Its
 * warnings go to `stderr` (the process's; a test's in-process reads keep them).
 */
export function contextOf(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env, stderr: (text: string) => void = writeStderr): Context {
  const target = resolveStore(opts, env);
  const agentRaw = opts.agent ?? (env.CRUX_AGENT || undefined);
  const actorRaw = opts.actor ?? (env.CRUX_ACTOR || undefined);
  const nowRaw = opts.now ?? (env.CRUX_NOW || undefined);
  const now = nowRaw === undefined ? Date.now() : parseTime(nowRaw, opts.now !== undefined ? '--now' : 'CRUX_NOW');
  const lockTimeoutMs = env.CRUX_LOCK_TIMEOUT ? parseDuration(env.CRUX_LOCK_TIMEOUT, 'CRUX_LOCK_TIMEOUT') : DEFAULT_LOCK_TIMEOUT_MS;
  const json = opts.json === true;
  // The one place a command's problems are collected: each once, however many of its readers met it (SPEC §3) —
  // a damaged line by (file, line, reason), any other warning by its text.
  const said = new Set<string>();
  const warn = (message: string) => {
    if (said.has(message)) return;
    said.add(message);
    stderr(`crux: ${keptText(message)}\n`);
  };
  const warnings: JournalWarning[] = [];
  const told = new Set<string>();
  const damage = (file: string, line: number, reason: string): boolean => {
    const key = JSON.stringify([file, line, reason]);
    if (told.has(key)) return false;
    told.add(key);
    warnings.push({ file, line, reason });
    passedOver.set(key, { file, line, reason });
    return true;
  };
  let workListener: ((phase: WorkPhase, done: number, total: number) => void) | undefined;
  const progress = (phase: WorkPhase, done: number, total: number) => workListener?.(phase, done, total);
  setUpCipher(target, opts.keyFile, env, warn);
  const colorWhen: ColorWhen = opts.color === false ? 'never' : typeof opts.color === 'string' ? opts.color : 'auto';
  return {
    dataDir: openStore(target, { warn, damage, progress }, lockTimeoutMs, historyRetention(env)),
    dataDirSource: target.source,
    storeWhy: target.why,
    agent: agentRaw === undefined ? undefined : parseAgentName(agentRaw),
    actor: actorRaw === undefined ? undefined : parseActorName(actorRaw),
    json,
    quiet: opts.quiet === true,
    // Asked only when human output is rendered: finding out whether stdout is a TTY loads node:tty.
    get color() {
      return !json && wantsColor(colorWhen, env, colorWhen === 'auto' && stdoutIsTerminal());
    },
    now,
    nowIso: formatTime(now),
    env,
    warnings,
    lockTimeoutMs,
    warn,
    onWork: (listener) => {
      workListener = listener;
      return () => {
        workListener = undefined;
      };
    },
  };
}

/** Reads all of standard input, refusing more than `maxBytes` without reading it all into memory. */
export function readStdin(maxBytes: number, what = 'standard input'): Buffer {
  // Not process.stdin.isTTY, which would load Node's stream machinery (~3 ms of every hook, which reads a pipe).
  if (isTerminal(0)) {
    throw invalid(`nothing on ${what}`, 'pipe the input in, or give it as an argument or file');
  }
  const inMemory = stdioInMemory()?.stdin;
  if (inMemory !== undefined) {
    if (inMemory.length > maxBytes) throw invalid(`${what} is over the limit of ${maxBytes} bytes`);
    return Buffer.from(inMemory);
  }
  return readLimited(0, maxBytes, what);
}

/** Reads a file or `-` (standard input), refusing more than `maxBytes`. */
export function readInputFile(path: string, maxBytes: number): Buffer {
  if (path === '-') return readStdin(maxBytes);
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw invalid(`no such file: ${path}`);
    if (code === 'EISDIR') throw invalid(`${path} is a directory, not a file`);
    throw invalid(`cannot read ${path} (${code})`);
  }
  try {
    return readLimited(fd, maxBytes, path);
  } finally {
    fs.closeSync(fd);
  }
}

function readLimited(fd: number, maxBytes: number, what: string): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  const chunk = Buffer.allocUnsafe(1 << 16);
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(fd, chunk, 0, chunk.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') continue;
      if (code === 'EOF') break;
      if (code === 'EISDIR') throw invalid(`${what} is a directory, not a file`);
      throw error;
    }
    if (n === 0) break;
    total += n;
    if (total > maxBytes) throw invalid(`${what} is over the limit of ${maxBytes} bytes`);
    chunks.push(Buffer.from(chunk.subarray(0, n)));
  }
  return Buffer.concat(chunks, total);
}
