// `npm run bench`, start-up rows: the CPU time (user + system) of a small command's process against `node -e 0`'s,
// in ONE interleaved run (shuffled each round), on a small data directory — the goals of issues 23, 47 and 52:
// `session get` ≤ 1.25×, `session put` ≤ 1.45×, `crux mcp` answering `initialize` ≤ 3×. CPU time, not wall: on a
// shared machine a process waits for a core as long as the others keep it busy, and wall time counts that wait.
// Each process's CPU is its parent's getrusage(RUSAGE_CHILDREN) (python3's, in microseconds; else bash's `time`,
// in milliseconds), every row started the same way, without NODE_EXTRA_CA_CERTS.
//
// BENCH_STARTUP_ROUNDS (default 30) counted rounds after 2 warm-up rounds. BENCH_STARTUP_PUTS (default 60) puts
// made before timing; the first get's directory then takes puts until its index log is frozen into a run, and 6
// more; a second get reads a directory of 27 puts. A session put adds ~0.97 KiB to the log; over a small store the
// log is frozen every 192 entries (~8 puts, under ~8.5 KiB: derived/store-index.ts), and after 27 puts it is at its
// longest (7.3 KiB). After ~70 puts the index's partition holds two pages, and a get reads both: the first get
// (~73 puts) checksums ~16.4 KiB, the second at most ~13.4 KiB, both less than the 24 KiB a process checksums
// before it loads node:zlib (derived/checksum.ts; 16 KiB before 2026-12-08, when the first get loaded it). A crux
// that froze the log at 1,024 entries (before 2026-12-07: every ~40 puts, past 16 KiB for ~70% of them) shows it in
// the labels: the first get's log 6.3 KiB, the second's past 16 KiB, where its get loads node:zlib.
// BENCH_BEFORE=<another checkout's bin/crux> adds its rows to the same run, for a before/after.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchEnv } from './interleave.mjs';

const CRUX = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'bin', 'crux');
const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 30);
const PUTS = Number(process.env.BENCH_STARTUP_PUTS ?? 60);
const LONG_LOG_PUTS = 27;
const AFTER_FREEZE = 6;
const WARMUP = 2;
const work = fs.mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'crux-bench-startup-'));
const env = benchEnv({ CRUX_AGENT: 'bench' });
for (const key of Object.keys(env)) if (key.startsWith('CRUX_') && key !== 'CRUX_AGENT') delete env[key];

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
})}\n`;

/** A small data directory for `crux`: a few sessions and a case, then `puts` puts (then, with `untilFrozen`, more
 * puts until the sessions' index log has just been frozen into a run: shorter than the put before left it). */
function prepare(crux, name, puts, untilFrozen = false) {
  const dir = join(work, name.replace(/\W+/g, '-'));
  const run = (args) => {
    const r = spawnSync(crux, ['--data-dir', dir, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    if (r.status !== 0) throw new Error(`${crux} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  };
  for (let i = 0; i < 5; i++) run(['session', 'put', `s${i}`, '{"step":1}']);
  run(['case', 'record', '--task', 'deploy the web app', '--action', 'ran it', '--outcome', 'ok']);
  for (let i = 0; i < puts; i++) run(['session', 'put', `s${i % 5}`, JSON.stringify({ step: i })]);
  // The log is frozen every few puts (400 more without it: a crux that never freezes it); then AFTER_FREEZE puts: a
  // log of 6 puts' blocks.
  for (let i = puts, last = logBytes(dir); untilFrozen; i++) {
    if (i >= puts + 400) throw new Error(`${crux}: the index log was not frozen in 400 puts`);
    run(['session', 'put', `s${i % 5}`, JSON.stringify({ step: i })]);
    const now = logBytes(dir);
    if (now < last) {
      for (let j = 1; j <= AFTER_FREEZE; j++) run(['session', 'put', `s${(i + j) % 5}`, JSON.stringify({ step: i + j })]);
      break;
    }
    last = now;
  }
  return dir;
}

/** The size of the sessions' index log in `dir`'s cache/ (0 when there is none). */
const logBytes = (dir) => fs.statSync(join(dir, 'cache', 'sessions.jsonl.idx-log'), { throwIfNoEntry: false })?.size ?? 0;

/** The size of the sessions' index log (cache/), which a get checksums whole: past 16 KiB, node:zlib loads. */
const logKiB = (dir) => `${(logBytes(dir) / 1024).toFixed(1)} KiB`;

// The gets read directories of their own, which no timed row writes: their index logs stay as prepared, one frozen
// into a run after PUTS puts or more, then 6 puts, and one after 27 puts (at its longest; past 16 KiB for a crux that
// froze the log at 1,024 entries).
function rowsFor(crux, label) {
  const read = prepare(crux, `${label}read`, PUTS, true);
  const readLong = prepare(crux, `${label}read-long`, LONG_LOG_PUTS);
  const dir = prepare(crux, `${label}write`, PUTS);
  const c = (args) => [crux, '--data-dir', dir, ...args];
  return [
    { name: `${label}session get (index log ${logKiB(read)})`, argv: [crux, '--data-dir', read, 'session', 'get', 's1'], bar: 1.25 },
    { name: `${label}session get (index log ${logKiB(readLong)})`, argv: [crux, '--data-dir', readLong, 'session', 'get', 's1'], bar: 1.25 },
    { name: `${label}session put`, argv: c(['session', 'put', 's2', '{"step":"bench"}']), bar: 1.45 },
    { name: `${label}case record`, argv: c(['case', 'record', '--task', 'fix the build', '--action', 'ran make', '--outcome', 'ok']) },
    { name: `${label}crux mcp (initialize answered, input closed)`, argv: c(['mcp']), input: INITIALIZE, bar: 3 },
  ];
}

const rows = [{ name: 'node -e 0', argv: [process.execPath, '-e', '0'] }, ...rowsFor(CRUX, '')];
if (process.env.BENCH_BEFORE) rows.push(...rowsFor(process.env.BENCH_BEFORE, 'before: '));

// getrusage(RUSAGE_CHILDREN) in microseconds: Python's, where python3 is installed; bash's `time` prints milliseconds.
// The difference of two readings: Python's own start may have run children of its own (a site hook).
const RUSAGE = [
  'import resource, subprocess, sys',
  'b = resource.getrusage(resource.RUSAGE_CHILDREN)',
  'subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)',
  'r = resource.getrusage(resource.RUSAGE_CHILDREN)',
  "print(f'{r.ru_utime - b.ru_utime:.6f} {r.ru_stime - b.ru_stime:.6f}')",
].join('\n');
const python = spawnSync('python3', ['-c', 'pass']).status === 0;

/** CPU ms (user + system) of one run of `row`'s process, from getrusage of the children of its parent. */
function cpuOnce(row) {
  const [cmd, ...args] = python
    ? ['python3', '-c', RUSAGE, ...row.argv]
    : ['bash', '-c', 'TIMEFORMAT="%3U %3S"; time "$@" >/dev/null 2>/dev/null', 'bash', ...row.argv];
  const r = spawnSync(cmd, args, { env, input: row.input ?? '', encoding: 'utf8' });
  const m = /(\d+\.\d+) (\d+\.\d+)\s*$/.exec(python ? r.stdout : r.stderr);
  if (r.status !== 0 || !m) throw new Error(`${row.name}: ${r.status} ${r.stderr}`);
  return (Number(m[1]) + Number(m[2])) * 1000;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const times = new Map(rows.map((r) => [r.name, []]));
for (let round = 0; round < WARMUP + ROUNDS; round++) {
  const order = [...rows].sort(() => Math.random() - 0.5);
  for (const row of order) {
    const ms = cpuOnce(row);
    if (round >= WARMUP) times.get(row.name).push(ms);
  }
}
const base = median(times.get('node -e 0'));
const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`\nStart-up, CPU time (user + system) of one process, ${ROUNDS} interleaved rounds; node -e 0 ${base.toFixed(1)} ms; load average ${load}\n`);
console.log('| command | median CPU | × node -e 0 | p90 × | goal |');
console.log('|---|---|---|---|---|');
for (const row of rows) {
  const t = times.get(row.name);
  const sorted = [...t].sort((a, b) => a - b);
  const p90 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))];
  const ratio = median(t) / base;
  const goal = row.bar === undefined ? '' : `≤ ${row.bar}× ${ratio <= row.bar ? 'met' : 'NOT met'}`;
  console.log(`| ${row.name} | ${median(t).toFixed(1)} ms | ${ratio.toFixed(2)}× | ${(p90 / base).toFixed(2)}× | ${goal} |`);
}
if (process.env.BENCH_KEEP !== '1') fs.rmSync(work, { recursive: true, force: true });
