// `node bench/ui.mjs`: what `crux ui` costs at BENCH_UI_SIZES sessions (default 10,000 and 1,000,000): each API
// request a page makes (median of BENCH_UI_ROUNDS, default 7), each page as the sum of its requests, beside the
// CLI's `session list --json --all-agents --limit 50` on the same store; the server's resident memory after each
// of three rounds of BENCH_UI_MEMORY_REQUESTS (default 500) more requests (it must level off); and the front-end bundle's size (raw and gzip).
// Every Node process runs without NODE_EXTRA_CA_CERTS (it adds ~42 ms to each start).
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { benchEnv } from './interleave.mjs';

const ROOT = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const CRUX = join(ROOT, 'bin', 'crux');
const SIZES = (process.env.BENCH_UI_SIZES ?? '10000,1000000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_UI_ROUNDS ?? 7);
// Requests per memory round (three rounds); BENCH_UI_REUSE=<dir>: time the s-<n> stores a kept run left there.
const MEMORY_REQUESTS = Number(process.env.BENCH_UI_MEMORY_REQUESTS ?? 500);
const REUSE = process.env.BENCH_UI_REUSE;
const NOW = Date.parse('2026-12-01T12:00:00Z');
const HOUR = 3_600_000;
const env = benchEnv({ CRUX_NOW: new Date(NOW).toISOString() });
const work = REUSE ?? fs.mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'crux-bench-ui-'));
const log = (line) => process.stderr.write(`${line}\n`);
const size = (n) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));

function run(dir, args, input) {
  const r = spawnSync('node', [CRUX, '--data-dir', dir, ...args], { env, input, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`crux ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

// 70% closed a month ago, 10% fresh, the rest active an hour ago; 24 stale ones; agents a0…a9; one session (busy, of a5) with 200 versions.
function sessionLines(from, to) {
  let out = '';
  for (let i = from; i < to; i++) {
    const r = (i * 2654435761) % 100;
    const line = { session_id: `s${i}`, agent: `a${i % 10}`, state: { step: i, notes: 'n'.repeat(200), plan: ['a', 'b', 'c'] } };
    if (i % 997 === 0 && i / 997 < 24) line.updated_at = new Date(NOW - 3 * 24 * HOUR).toISOString();
    else if (r < 70) Object.assign(line, { status: 'closed', updated_at: new Date(NOW - 30 * 24 * HOUR).toISOString() });
    else if (r < 80) line.updated_at = new Date(NOW - 60_000).toISOString();
    else line.updated_at = new Date(NOW - HOUR).toISOString();
    out += `${JSON.stringify(line)}\n`;
  }
  return out;
}

function get(port, cookie, path) {
  return new Promise((ok, fail) => {
    const t = performance.now();
    const req = request({ host: '127.0.0.1', port, path, headers: { Host: `127.0.0.1:${port}`, Cookie: cookie } }, (res) => {
      let bytes = 0;
      res.on('data', (c) => {
        bytes += c.length;
      });
      res.on('end', () => (res.statusCode === 200 ? ok({ ms: performance.now() - t, bytes }) : fail(new Error(`${path}: HTTP ${res.statusCode}`))));
    });
    req.on('error', fail);
    req.end();
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rss = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

// What each page asks for (the overview's journal check comes after the rest is on screen: timed apart).
const PAGES = {
  overview: ['/api/overview/sessions', '/api/overview/activity', '/api/overview/tags', '/api/overview/journals'],
  'overview: journal check': ['/api/journal/check'],
  sessions: ['/api/sessions?limit=200'],
  'sessions, every status': ['/api/sessions?all=1&limit=200'],
  'sessions, stranded': ['/api/sessions?stranded=1&limit=200'],
  'sessions, one agent': ['/api/sessions?agent=a3&limit=200'],
  session: ['/api/sessions/a5/busy', '/api/sessions/a5/busy/history?limit=100'],
  cases: ['/api/cases?sort=-created&limit=100', '/api/cases/retrieve?task=renew%20the%20tls%20certificate&top_k=20'],
  handoffs: ['/api/handoffs?sort=-created&limit=500'],
};

const rows = [];
for (const n of SIZES) {
  const dir = join(work, `s-${n}`);
  const t0 = performance.now();
  if (!REUSE) {
    for (let from = 0; from < n; from += 250_000) run(dir, ['session', 'import', '-'], sessionLines(from, Math.min(n, from + 250_000)));
    for (let i = 0; i < 200; i++) run(dir, ['--agent', 'a5', 'session', 'put', 'busy', JSON.stringify({ step: i, todo: ['x', `y${i}`] })]);
    log(`bench ui: built ${size(n)} sessions in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const cli = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    run(dir, ['session', 'list', '--json', '--all-agents', '--limit', '50']);
    cli.push(performance.now() - t);
  }
  const ui = spawn('node', [CRUX, '--data-dir', dir, 'ui'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((ok) => ui.stdout.once('data', (d) => ok(String(d))));
  const [, port, token] = /:(\d+)\/\?token=(\S+)/.exec(line);
  const cookie = `crux_ui_${port}=${token}`;
  for (const [page, paths] of Object.entries(PAGES)) {
    const times = [];
    for (let r = 0; r < ROUNDS; r++) {
      let ms = 0;
      for (const p of paths) ms += (await get(Number(port), cookie, p)).ms;
      times.push(ms);
    }
    rows.push({ size: size(n), page, ms: median(times).toFixed(1), 'cli list --limit 50 (ms)': median(cli).toFixed(1) });
  }
  // Resident memory after each round of requests of one agent's sessions: it must level off, not grow with use.
  const marks = [rss(ui.pid)];
  for (let k = 0; k < 3; k++) {
    for (let i = 0; i < MEMORY_REQUESTS; i++) await get(Number(port), cookie, PAGES['sessions, one agent'][0]);
    marks.push(rss(ui.pid));
  }
  rows.push({
    size: size(n),
    page: `server RSS, then after each ${MEMORY_REQUESTS} more requests (MiB)`,
    ms: marks.map((m) => m.toFixed(0)).join(' → '),
    'cli list --limit 50 (ms)': '',
  });
  ui.kill('SIGTERM');
  await new Promise((ok) => ui.once('exit', ok));
  if (!process.env.BENCH_KEEP && !REUSE) fs.rmSync(dir, { recursive: true, force: true });
}

const bundle = Object.fromEntries(
  ['app.js', 'app.css', 'index.html'].map((f) => {
    const bytes = fs.readFileSync(join(ROOT, 'dist', 'ui', f));
    return [f, `${bytes.length} B (gzip ${gzipSync(bytes).length} B)`];
  }),
);
console.table(rows);
console.log('front-end bundle (dist/ui):', bundle);
if (!process.env.BENCH_KEEP && !REUSE) fs.rmSync(work, { recursive: true, force: true });
