// What the bench measures beside interleaved ratios: a process's peak memory, its children's CPU time, tail
// latency over many runs, and concurrent writers' CPU per put against one writer's.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';

const TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
// Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks.
const TICKS_PER_S = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/** CPU time (user + system) of every child this process has waited for, in ms (Linux: /proc/self/stat). */
export function childrenCpuMs() {
  if (!fs.existsSync('/proc/self/stat')) return undefined;
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command name (which may hold spaces, so split after its closing parenthesis): cutime and
  // cstime are fields 16 and 17 of the whole line.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(rest[13]) + Number(rest[14])) * 1000) / TICKS_PER_S;
}

/** Runs `argv` once: its wall time, and its peak resident memory (MiB) where /usr/bin/time is installed. */
export function runMeasured(argv, { env, input } = {}) {
  const wrapped = TIME ? [TIME, '-f', '%M', ...argv] : argv;
  const t = process.hrtime.bigint();
  const r = spawnSync(wrapped[0], wrapped.slice(1), { env, input, stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'], maxBuffer: 1 << 30 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  const stderr = String(r.stderr);
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${stderr}`);
  const kb = TIME ? Number(stderr.trim().split('\n').at(-1)) : NaN;
  return { ms, peakMiB: Number.isFinite(kb) ? kb / 1024 : undefined };
}

/** The peak memory of one more run of each row (after `before`, as the interleaved runs do). */
export function peakOfRows(rows, env) {
  const peaks = new Map();
  if (!TIME) return peaks;
  for (const row of rows) {
    if (row.before) row.before(row);
    peaks.set(row.name, runMeasured(row.argv, { env: row.env ?? env, input: row.input }).peakMiB);
  }
  return peaks;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

/** `count` runs of `argvOf(i)` one after another: p50, p99, p99.9 and max wall ms, the peak memory over all. */
export function tailLatency(count, argvOf, env) {
  const ms = [];
  let peak;
  for (let i = 0; i < count; i++) {
    const r = runMeasured(argvOf(i), { env });
    ms.push(r.ms);
    if (r.peakMiB !== undefined) peak = Math.max(peak ?? 0, r.peakMiB);
  }
  const s = ms.sort((a, b) => a - b);
  return { count, p50: quantile(s, 0.5), p99: quantile(s, 0.99), p999: quantile(s, 0.999), max: s.at(-1), peakMiB: peak };
}

/**
 * `writers` writer loops at once, `puts` puts each, every put a whole process (`argvOf(w, i)`): wall seconds and
 * the children's CPU ms per put. A put that fails (a loaded machine can keep a writer past the lock bound: 75)
 * is counted and reported, not fatal.
 */
export async function writersAtOnce(writers, puts, argvOf, env) {
  const cpu0 = childrenCpuMs();
  const t = performance.now();
  let failed = 0;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; i < puts; i++) {
        const argv = argvOf(w, i);
        const code = await new Promise((resolve) => spawn(argv[0], argv.slice(1), { env, stdio: 'ignore' }).on('exit', resolve));
        if (code !== 0) failed++;
      }
    }),
  );
  const s = (performance.now() - t) / 1000;
  const cpu = childrenCpuMs();
  return { puts: writers * puts, failed, s, cpuPerPutMs: cpu0 === undefined ? undefined : (cpu - cpu0) / (writers * puts) };
}
