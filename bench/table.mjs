// `npm run bench` (last step), or `node bench/table.mjs`: ONE table of every read command and `crux ui` API route,
// on the data directory and on PostgreSQL, at BENCH_TABLE_SIZES sessions and cases (default 1000,100000,1000000):
// the first call after the store was built (its cache/ and derived rows as the writes left them), then
// BENCH_TABLE_WARM (default 5) warm calls, p50 and max, and the peak resident memory of all of them. Times are CPU
// time (user + system) of the process that answers — the command, or the ui server across one request — since
// the machine is shared and wall time is noisy; wall p50 beside it. Written to BENCH_TABLE_OUT (default
// docs/performance/bench-table.md) with the run's conditions, rows that were not run left out (never estimated).
//
// BENCH_TABLE_SLOW_MS (default 10000): a row whose first call takes more CPU than that gets one warm call.
// BENCH_TABLE_ENGINES (default dir,pg): pg needs CRUX_BENCH_PG_URL or Debian's postgresql (a throwaway cluster).
// BENCH_TABLE_ONLY=<substring,…>: only the rows whose name holds one of them (a subset, e.g. `complete,ui`).
// BENCH_KEEP=1 keeps the built stores; BENCH_TABLE_REUSE=<dir> times those a kept run built there.
// BENCH_TABLE_BUILD_ONLY=1 builds (and copies into PostgreSQL) and stops: with BENCH_TABLE_REUSE=<dir> and a server of
// one's own (CRUX_BENCH_PG_URL), the 1M stores can be built ahead of the timed run, in the background.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchEnv } from './interleave.mjs';
import { BOILERPLATE, caseLines, midSession, RARE, sessionLines, WORDS } from './data.mjs';

const ROOT = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
// BENCH_CRUX=<path to bin/crux>: another build (a copy of bin/ and dist/ from before a change), for before/after.
const CRUX = resolve(process.env.BENCH_CRUX ?? join(ROOT, 'bin', 'crux'));
const SIZES = (process.env.BENCH_TABLE_SIZES ?? '1000,100000,1000000').split(',').map(Number);
const ENGINES = (process.env.BENCH_TABLE_ENGINES ?? 'dir,pg').split(',');
const WARM = Number(process.env.BENCH_TABLE_WARM ?? 5);
// A row whose first call takes more CPU than this (ms) gets one warm call, not WARM: the whole-journal reads at 1M.
const SLOW_MS = Number(process.env.BENCH_TABLE_SLOW_MS ?? 10_000);
const ONLY = process.env.BENCH_TABLE_ONLY?.split(',').filter(Boolean);
const OUT = resolve(ROOT, process.env.BENCH_TABLE_OUT ?? 'docs/performance/bench-table.md');
const REUSE = process.env.BENCH_TABLE_REUSE;
const BUILD_ONLY = Boolean(process.env.BENCH_TABLE_BUILD_ONLY);
const env = benchEnv({ CRUX_NOW: '2026-12-01T12:00:00Z' });
const log = (line) => process.stderr.write(`${line}\n`);
const work = REUSE ?? fs.mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'crux-bench-table-'));
const size = (n) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));
const TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;
const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const where = (w) => (w.startsWith('postgres') ? ['--store', w] : ['--data-dir', w]);

function run(w, args, input) {
  const r = spawnSync('node', [CRUX, ...where(w), ...args], { env, input, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`crux ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

// ---- PostgreSQL --------------------------------------------------------------------------------------------
let server = process.env.CRUX_BENCH_PG_URL;
const cluster = ENGINES.includes('pg') && !server ? fs.mkdtempSync(join(tmpdir(), 'crux-bench-cluster-')) : undefined;
if (cluster) {
  try {
    server = execFileSync(join(ROOT, '.ci', 'pg-cluster'), ['start', cluster], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (error) {
    log(`bench table: no PostgreSQL server (${String(error.stderr ?? error).trim()}); its rows are left out`);
  }
}
process.on('exit', () => {
  if (cluster) spawnSync(join(ROOT, '.ci', 'pg-cluster'), ['stop', cluster], { stdio: 'ignore' });
  if (!process.env.BENCH_KEEP && !REUSE) fs.rmSync(work, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
const pgStore = (n) => {
  const u = new URL(server);
  u.searchParams.set('schema', `bench_table_${size(n).toLowerCase()}`);
  return u.href;
};

// ---- the stores: sessions and cases in one data directory (the ui's pages show both), copied into PostgreSQL --
/** 60 archived sessions of agent h and 20 handoffs from h to b beside bench/data.mjs's sessions and cases. */
function build(n) {
  const dir = join(work, `t-${n}`);
  if (REUSE && fs.existsSync(dir)) return dir;
  const t = performance.now();
  for (let from = 0; from < n; from += 250_000) run(dir, ['session', 'import', '-'], sessionLines(from, Math.min(n, from + 250_000), n));
  run(dir, ['case', 'import', '-'], caseLines(n));
  for (let i = 0; i < 60; i++) {
    run(dir, ['--agent', 'h', 'session', 'put', `h${i}`, '{"step":0}']);
    if (i < 20) run(dir, ['--agent', 'h', 'handoff', 'mint', `h${i}`, '--to', 'b', '--out', join(work, `pkg-${n}-${i}.json`)]);
    else run(dir, ['--agent', 'h', 'session', 'archive', `h${i}`, '--reason', 'bench']);
  }
  log(`bench table: built ${size(n)} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  return dir;
}

// ---- what is timed -----------------------------------------------------------------------------------------
/** Every read command (CLI), as `crux <args>`; `h` rows run as agent h. */
function cliReads(n, caseId) {
  const mid = midSession(n, 's0');
  return [
    ['session get', ['session', 'get', mid]],
    ['session history', ['session', 'history', mid, '--json']],
    ['session list --limit 50', ['session', 'list', '--limit', '50', '--json']],
    ['session list --all --limit 50', ['session', 'list', '--all', '--limit', '50', '--json']],
    ['session list --status closed --limit 20', ['session', 'list', '--status', 'closed', '--limit', '20', '--json']],
    ['session list --stranded', ['session', 'list', '--stranded', '--json']],
    ['session list --all-agents --limit 50', ['session', 'list', '--all-agents', '--limit', '50', '--json']],
    ['--agent h session list --archived', ['--agent', 'h', 'session', 'list', '--archived', '--json']],
    ['session reap --dry-run', ['session', 'reap', '--dry-run', '--json']],
    ['__complete session s1', ['__complete', 'session', 's1']],
    ['__complete session s1234', ['__complete', 'session', 's1234']],
    ['__complete case (no prefix)', ['__complete', 'case', '']],
    ['--agent h handoff list', ['--agent', 'h', 'handoff', 'list', '--json']],
    ['--agent h handoff list --status outstanding --to b', ['--agent', 'h', 'handoff', 'list', '--status', 'outstanding', '--to', 'b', '--json']],
    ['case show', ['case', 'show', caseId, '--json']],
    ['case list --limit 20', ['case', 'list', '--limit', '20', '--json']],
    ['case list --only-failure --limit 20', ['case', 'list', '--only-failure', '--limit', '20', '--json']],
    [`case list --tag ${WORDS[0]} --limit 20`, ['case', 'list', '--tag', WORDS[0], '--limit', '20', '--json']],
    [`case list --tag ${WORDS[0]} --tag ${WORDS[1]} --limit 20`, ['case', 'list', '--tag', WORDS[0], '--tag', WORDS[1], '--limit', '20', '--json']],
    ...['reward', '-reward', 'reused', '-reused'].map((key) => [
      `case list --sort ${key} --limit 20`,
      ['case', 'list', `--sort=${key}`, '--limit', '20', '--json'],
    ]),
    ['case retrieve (rare words)', ['case', 'retrieve', RARE.join(' '), '--json']],
    ['case retrieve (common words)', ['case', 'retrieve', BOILERPLATE, '--json']],
    ['doctor', ['doctor', '--json']],
    ['journal check', ['journal', 'check', '--json']],
  ];
}

/** Every API route of `crux ui` (what its pages ask for). */
function uiRoutes(n, caseId) {
  const mid = midSession(n, 's0');
  return [
    '/api/overview/sessions',
    '/api/overview/activity',
    '/api/overview/tags',
    '/api/overview/journals',
    '/api/sessions?limit=200',
    '/api/sessions?all=1&limit=200',
    '/api/sessions?status=archived&limit=20',
    '/api/sessions?status=closed&limit=20',
    '/api/sessions?stranded=1&limit=200',
    '/api/sessions?agent=h&limit=200',
    `/api/sessions/-/${mid}`,
    `/api/sessions/-/${mid}/history?limit=100`,
    '/api/cases?sort=-created&limit=50',
    '/api/cases?sort=-reward&limit=50',
    '/api/cases?sort=reused&limit=50',
    `/api/cases?tag=${WORDS[0]}&tag=${WORDS[1]}&offset=0&limit=20`,
    '/api/cases?only_failure=1&limit=50',
    `/api/cases/${caseId}`,
    `/api/cases/retrieve?task=${encodeURIComponent(RARE.join(' '))}&top_k=20`,
    '/api/handoffs?sort=-created&limit=500',
    '/api/journal/check',
  ];
}

const wanted = (name) => ONLY === undefined || ONLY.some((s) => name.includes(s));
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)];

/** A call that failed: its row shows `cell` (the exit and why) instead of times; the run goes on. */
class CallFailed extends Error {
  constructor(cell, detail) {
    super(`${cell}: ${detail}`);
    this.cell = cell;
  }
}

/** One CLI call under /usr/bin/time: CPU ms (user + system), wall ms, peak MiB. */
function timeCli(argv) {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', 'node', CRUX, ...argv], { env, stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 30 });
  const wall = performance.now() - t;
  const last = String(r.stderr).trim().split('\n').at(-1).split(' ').map(Number);
  if (r.status !== 0) {
    const kind = /"kind":"([^"]+)"/.exec(String(r.stderr))?.[1] ?? 'error';
    const why = /statement_timeout/.test(String(r.stderr)) ? ', statement_timeout' : '';
    throw new CallFailed(`exit ${r.status} (${kind}${why}) after ${(wall / 1000).toFixed(0)} s wall`, String(r.stderr));
  }
  return { cpu: (last[0] + last[1]) * 1000, wall, peak: last[2] / 1024 };
}

const procCpuMs = (pid) => {
  const rest = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = rest.slice(rest.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS;
};
const peakMiB = (pid) => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

function httpGet(port, cookie, path) {
  return new Promise((ok, fail) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { Host: `127.0.0.1:${port}`, Cookie: cookie } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? ok() : fail(new CallFailed(`HTTP ${res.statusCode}`, path))));
    });
    req.on('error', fail);
    req.end();
  });
}

/** A route on a server of its own (its first request is the route's first call): CPU of the server across each request. */
async function timeRoute(w, path) {
  const ui = spawn('node', [CRUX, ...where(w), 'ui'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const line = await new Promise((ok) => ui.stdout.once('data', (d) => ok(String(d))));
    const [, port, token] = /:(\d+)\/\?token=(\S+)/.exec(line);
    const cookie = `crux_ui_${port}=${token}`;
    const calls = [];
    for (let i = 0; i <= (i > 0 && calls[0].cpu > SLOW_MS ? 1 : WARM); i++) {
      const c0 = procCpuMs(ui.pid);
      const t = performance.now();
      await httpGet(Number(port), cookie, path);
      calls.push({ wall: performance.now() - t, cpu: procCpuMs(ui.pid) - c0 });
    }
    return { calls, peak: peakMiB(ui.pid) };
  } finally {
    ui.kill('SIGTERM');
    await new Promise((ok) => ui.once('exit', ok));
  }
}

const summary = (calls, peak) => {
  const warm = calls.slice(1);
  return {
    first: calls[0].cpu,
    p50: quantile(
      warm.map((c) => c.cpu),
      0.5,
    ),
    max: Math.max(...warm.map((c) => c.cpu)),
    wall: quantile(
      warm.map((c) => c.wall),
      0.5,
    ),
    peak,
  };
};

// ---- run ---------------------------------------------------------------------------------------------------
const results = new Map(); // `${row}|${engine}` → Map(size → summary)
const note = (row, engine, n, s) => {
  const k = `${row}|${engine}`;
  if (!results.has(k)) results.set(k, new Map());
  results.get(k).set(n, s);
  if (!BUILD_ONLY) writeTable();
};
const failed = (row, engine, n, error) => {
  if (!(error instanceof CallFailed)) throw error;
  note(row, engine, n, { failed: error.cell });
  log(`bench table: ${engine} ${size(n)} ${row}: FAILED ${error.message}`);
};
const started = new Date().toISOString();
const loadBefore = loadavg();
for (const n of SIZES) {
  const dir = build(n);
  const caseId = /"case_id":"([^"]+)"/.exec(String(run(dir, ['case', 'list', '--limit', '1', '--json'])))[1];
  const stores = ENGINES.includes('dir') ? [['dir', dir]] : [];
  if (ENGINES.includes('pg') && server) {
    const pg = pgStore(n);
    // A throwaway cluster is new each run: the copy is kept only on a server of one's own.
    const marker = join(work, `pg-${n}.copied`);
    if (!REUSE || !process.env.CRUX_BENCH_PG_URL || !fs.existsSync(marker)) {
      spawnSync('psql', [server, '-qc', `drop schema if exists bench_table_${size(n).toLowerCase()} cascade`], { stdio: 'ignore' });
      const t = performance.now();
      run(dir, ['journal', 'copy', '--to', pg]);
      fs.writeFileSync(marker, '');
      log(`bench table: copied ${size(n)} into PostgreSQL in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    stores.push(['pg', pg]);
  }
  if (BUILD_ONLY) continue;
  for (const [engine, w] of stores) {
    for (const [name, args] of cliReads(n, caseId)) {
      if (!wanted(name)) continue;
      try {
        const calls = [timeCli([...where(w), ...args])];
        while (calls.length < 1 + (calls[0].cpu > SLOW_MS ? 1 : WARM)) calls.push(timeCli([...where(w), ...args]));
        note(name, engine, n, summary(calls, Math.max(...calls.map((c) => c.peak))));
        log(`bench table: ${engine} ${size(n)} ${name}: first ${calls[0].cpu.toFixed(0)} ms`);
      } catch (error) {
        failed(name, engine, n, error);
      }
    }
    for (const path of uiRoutes(n, caseId)) {
      const name = `ui ${path
        .replace(/\/-\/s\d+/, '/-/<id>')
        .replace(caseId, '<id>')
        .replace(/task=[^&]+/, 'task=<5 rare words>')}`;
      if (!wanted(name)) continue;
      try {
        const { calls, peak } = await timeRoute(w, path);
        note(name, engine, n, summary(calls, peak));
        log(`bench table: ${engine} ${size(n)} ${name}: first ${calls[0].cpu.toFixed(0)} ms`);
      } catch (error) {
        failed(name, engine, n, error);
      }
    }
  }
}

// ---- the table ---------------------------------------------------------------------------------------------
/** The table of every row measured so far (written after each row: a run stopped early leaves what it measured). */
function writeTable() {
  const ms = (v) => (v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${v.toFixed(0)}`);
  const lines = [
    '# The bench table',
    '',
    `Written by \`node bench/table.mjs\` (the last step of \`npm run bench\`) on ${started}: node ${process.version},`,
    `sizes ${SIZES.map(size).join(', ')} sessions and as many cases, engines ${ENGINES.join(', ')}${server ? '' : ' (no PostgreSQL server: dir only)'},`,
    `${WARM} warm calls after the first (one, for a row whose first call took over ${SLOW_MS / 1000} s of CPU); load average ${loadBefore} before, ${loadavg()} after.`,
    '',
    'Each cell: **first** call · warm **p50** · warm **max**, in ms of CPU time (10 ms ticks; user + system of the process that',
    'answers: the command, or the `crux ui` server across the one request), then the warm wall-clock p50 and the peak',
    'resident memory (MiB) of all the calls. A CLI row is a whole process (node start included: `node -e 0` costs',
    'about 40–60 ms of CPU here); a ui row is the request alone, on a server started for that route. The stores:',
    "bench/data.mjs's sessions (70% closed, 24 stranded) and cases (50% share five words, 20% failures), 60 sessions",
    'of agent h (40 archived) and 20 handoffs from h to b. An empty cell was not measured in this run.',
    '',
    `| read | engine | ${SIZES.map((n) => `${size(n)}: first · p50 · max (wall p50, MiB)`).join(' | ')} |`,
    `|---|---|${SIZES.map(() => '---').join('|')}|`,
  ];
  for (const [k, bySize] of results) {
    const [row, engine] = k.split('|');
    const cells = SIZES.map((n) => {
      const s = bySize.get(n);
      return s === undefined
        ? ''
        : s.failed !== undefined
          ? `failed: ${s.failed}`
          : `${ms(s.first)} · ${ms(s.p50)} · ${ms(s.max)} (${ms(s.wall)}, ${s.peak.toFixed(0)})`;
    });
    lines.push(`| \`${row}\` | ${engine} | ${cells.join(' | ')} |`);
  }
  fs.writeFileSync(OUT, `${lines.join('\n')}\n`);
}
if (BUILD_ONLY) process.exit(0);
writeTable();
log(`bench table: written to ${OUT}`);
if (process.env.BENCH_KEEP || REUSE) log(`bench table: stores kept in ${work}`);
