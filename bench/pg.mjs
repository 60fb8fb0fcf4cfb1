// `npm run bench`, PostgreSQL rows: the same commands on a shared store (--store postgres://…) beside a data
// directory, interleaved in one run. The server: CRUX_BENCH_PG_URL, else a throwaway cluster (.ci/pg-cluster).
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchEnv, interleave } from './interleave.mjs';

const ROOT = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const CRUX = join(ROOT, 'bin', 'crux');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const env = benchEnv();
const log = (line) => process.stderr.write(`${line}\n`);
const work = fs.mkdtempSync(join(tmpdir(), 'crux-bench-pg-'));

let server = process.env.CRUX_BENCH_PG_URL;
// Its own temp dir: the server runs as `postgres`, which cannot enter the private work dir.
const cluster = fs.mkdtempSync(join(tmpdir(), 'crux-bench-cluster-'));
if (!server) {
  try {
    server = execFileSync(join(ROOT, '.ci', 'pg-cluster'), ['start', cluster], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (error) {
    log(`bench: no PostgreSQL server (${String(error.stderr ?? error).trim()}); the PostgreSQL rows are skipped`);
    process.exit(0);
  }
}
// The cluster stops however the run ends.
const stopCluster = () => {
  if (!process.env.CRUX_BENCH_PG_URL) spawnSync(join(ROOT, '.ci', 'pg-cluster'), ['stop', cluster], { stdio: 'ignore' });
};
process.on('exit', stopCluster);
const store = (schema) => {
  const u = new URL(server);
  u.searchParams.set('schema', schema);
  return u.href;
};
const at = (where) => (where.startsWith('postgres') ? ['--store', where] : ['--data-dir', where]);
const crux = (where, ...args) => ['node', CRUX, ...at(where), ...args];
function run(where, args, input) {
  const r = spawnSync('node', [CRUX, ...at(where), ...args], { env, input, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`crux ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

// The same data sets as bench/run.mjs: 10k sessions, 100k cases.
function sessionLines(n) {
  let out = '';
  for (let i = 0; i < n; i++) out += `${JSON.stringify({ session_id: `s${i}`, state: { step: i, notes: 'n'.repeat(200), plan: ['a', 'b', 'c'] } })}\n`;
  return out;
}
const WORDS = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}${'xyzq'[i % 4]}`);
function caseLines(n) {
  let seed = 42;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = () => WORDS[Math.floor(rand() ** 2 * WORDS.length)];
  let out = '';
  for (let i = 0; i < n; i++) {
    const task = Array.from({ length: 5 + Math.floor(rand() * 8) }, pick).join(' ');
    out += `${JSON.stringify({ task, action: `ran ${pick()}`, outcome: rand() < 0.8 ? 'worked' : 'failed', success: rand() < 0.8 })}\n`;
  }
  return out;
}

const places = { dir: { s: join(work, 'sessions'), c10: join(work, 'cases-10k'), c100: join(work, 'cases-100k') } };
places.pg = { s: store('bench_sessions'), c10: store('bench_cases_10k'), c100: store('bench_cases_100k') };
log(`bench: loading 10k sessions, 10k and 100k cases into a data directory and into ${new URL(server).host} …`);
const loadS = {};
for (const [kind, p] of Object.entries(places)) {
  run(p.s, ['session', 'import', '-'], sessionLines(10_000));
  run(p.c10, ['case', 'import', '-'], caseLines(10_000));
  const t = performance.now();
  run(p.c100, ['case', 'import', '-'], caseLines(100_000));
  loadS[kind] = (performance.now() - t) / 1000;
}
const query = [WORDS[3], WORDS[10], WORDS[100], 'deploy'];

let closing = 0;
const rows = [{ name: 'node -e 0', argv: ['node', '-e', '0'] }];
for (const [kind, p] of Object.entries(places)) {
  const k = kind === 'pg' ? 'pg ' : 'dir';
  rows.push({ name: `${k} session get (10k sessions)`, argv: crux(p.s, 'session', 'get', 's5000') });
  rows.push({ name: `${k} session put (10k sessions)`, argv: crux(p.s, 'session', 'put', 's5001', '{"step":2}') });
  // Each round closes a session that is open (the put before it is not timed).
  const closeRow = { name: `${k} session close (10k sessions)`, argv: crux(p.s, 'session', 'close', 'c') };
  // interleave() copies each row: the id is changed in the argv array they share.
  closeRow.before = () => {
    closing += 1;
    closeRow.argv[closeRow.argv.length - 1] = `c${closing}`;
    run(p.s, ['session', 'put', `c${closing}`, '{}']);
  };
  rows.push(closeRow);
  rows.push({ name: `${k} case retrieve (10k cases)`, argv: crux(p.c10, 'case', 'retrieve', ...query, '--json') });
  rows.push({ name: `${k} case retrieve (100k cases)`, argv: crux(p.c100, 'case', 'retrieve', ...query, '--json') });
}

log(`bench: ${ROUNDS} interleaved rounds of ${rows.length} commands …`);
const results = interleave(
  rows.map((r) => ({ ...r, env: r.env ?? env })),
  { rounds: ROUNDS, warmup: 2 },
);
const base = results[0].median;
const pad = (s, n) => String(s).padEnd(n);
console.log(`\ncrux bench, PostgreSQL — ${new Date().toISOString()}, node ${process.version}, server ${new URL(server).host}, ${ROUNDS} rounds\n`);
console.log(`${pad('command', 42)} ${pad('median ms', 10)} ${pad('min–max ms', 16)} ratio to node -e 0`);
for (const r of results) {
  console.log(`${pad(r.name, 42)} ${pad(r.median.toFixed(1), 10)} ${pad(`${r.min.toFixed(1)}–${r.max.toFixed(1)}`, 16)} ${(r.median / base).toFixed(2)}×`);
}
console.log(`\ncase import of 100,000 cases: data directory ${loadS.dir.toFixed(1)} s, PostgreSQL ${loadS.pg.toFixed(1)} s`);

if (process.env.CRUX_BENCH_PG_URL)
  for (const p of Object.values(places.pg)) spawnSync('psql', [server, '-qc', `drop schema if exists ${new URL(p).searchParams.get('schema')} cascade`]);
fs.rmSync(work, { recursive: true, force: true });
