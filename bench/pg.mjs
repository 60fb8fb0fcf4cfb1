// `npm run bench`, PostgreSQL rows: every command of bench/run.mjs on a shared store (--store postgres://…) beside
// the same command on a data directory holding the same records, at BENCH_PG_SIZES (default 10k, 100k, 1M
// sessions and cases), in ONE interleaved run; then the growth 10k → 1M against issue 19's targets, the peak
// memory of each row, `journal copy` (how each PostgreSQL store is filled: the data directory copied into it,
// timed and measured) and the cost of TCP + SCRAM against the server's Unix socket.
//
// The server: CRUX_BENCH_PG_URL, else a throwaway cluster (.ci/pg-cluster), whose socket directory also gives the
// Unix-socket rows. BENCH_ROUNDS (default 11) counted rounds after 2 warm-up rounds; BENCH_PG_TAIL_PUTS (default
// 300; 0 skips) new-id puts one after another at the largest size on PostgreSQL, for its tail latency.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchEnv, interleave } from './interleave.mjs';
import { peakOfRows, runMeasured, tailLatency } from './measure.mjs';
import { BOILERPLATE, caseLines, firstCaseId, GROWTH_TARGETS, midSession, RARE, sessionLines, WORDS } from './data.mjs';

const ROOT = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const CRUX = join(ROOT, 'bin', 'crux');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const SIZES = (process.env.BENCH_PG_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const TAIL_PUTS = Number(process.env.BENCH_PG_TAIL_PUTS ?? 300);
const env = benchEnv({ CRUX_NOW: '2026-12-01T12:00:00Z' });
const log = (line) => process.stderr.write(`${line}\n`);
const work = fs.mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'crux-bench-pg-'));
const RUN_ID = Date.now().toString(36);
const size = (n) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));
const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

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
  else for (const schema of schemas) spawnSync('psql', [server, '-qc', `drop schema if exists ${schema} cascade`], { stdio: 'ignore' });
};
const schemas = [];
process.on('exit', () => {
  stopCluster();
  fs.rmSync(work, { recursive: true, force: true });
});
// A bench stopped by a signal stops its cluster too (exit handlers do not run on a signal's default action).
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
const store = (schema) => {
  schemas.push(schema);
  const u = new URL(server);
  u.searchParams.set('schema', schema);
  return u.href;
};
// The same server through its Unix socket (the throwaway cluster's socket is in its directory, `trust` there).
const socketUrl = process.env.CRUX_BENCH_PG_URL
  ? undefined
  : (href) => {
      const u = new URL(href);
      return `postgres://${u.username}@/${u.pathname.slice(1)}?host=${encodeURIComponent(cluster)}&port=${u.port}&schema=${u.searchParams.get('schema')}`;
    };
const at = (where) => (where.startsWith('postgres') ? ['--store', where] : ['--data-dir', where]);
const crux = (where, ...args) => ['node', CRUX, ...at(where), ...args];
function run(where, args, input) {
  const r = spawnSync('node', [CRUX, ...at(where), ...args], { env, input, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`crux ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}
const counter = (prefix) => {
  let i = 0;
  return () => `${prefix}${i++}`;
};

// ---- data sets: a data directory built as bench/run.mjs builds it, then copied into PostgreSQL --------------
const builds = {};
const copies = [];
log(`bench: PostgreSQL at ${new URL(server).host}; sizes ${SIZES.map(size).join(', ')}; load average ${loadavg()}`);
for (const n of SIZES) {
  const t = performance.now();
  const dir = { s: join(work, `s-${n}`), c: join(work, `c-${n}`) };
  for (let from = 0; from < n; from += 250_000) run(dir.s, ['session', 'import', '-'], sessionLines(from, Math.min(n, from + 250_000), n));
  run(dir.s, ['session', 'put', 'target', '{"step":0}']);
  run(dir.c, ['case', 'import', '-'], caseLines(n));
  // Agent a's handoff sources (one per timed mint) and sessions to close, one more than the timed runs use (the
  // peak-memory pass runs every row once more). Both kinds get them: the copy carries them.
  for (let i = 0; i < ROUNDS + 3; i++) run(dir.s, ['--agent', 'a', 'session', 'put', `src-${RUN_ID}-${i}`, '{"step":0}']);
  for (let i = 0; i < ROUNDS + 3; i++) run(dir.s, ['session', 'put', `close-${RUN_ID}-${i}`, '{"step":0}']);
  const built = performance.now() - t;
  const pg = { s: store(`bench_s_${size(n).toLowerCase()}`), c: store(`bench_c_${size(n).toLowerCase()}`) };
  for (const k of ['s', 'c']) {
    const copied = runMeasured(crux(dir[k], 'journal', 'copy', '--to', pg[k]), { env });
    copies.push({ n, what: k === 's' ? 'sessions' : 'cases', ...copied });
  }
  builds[n] = { dir, pg, caseId: firstCaseId(fs, join(dir.c, 'cases.jsonl')) };
  log(
    `bench: built ${size(n)} in ${(built / 1000).toFixed(1)} s, copied into PostgreSQL in ${copies
      .slice(-2)
      .map((c) => `${(c.ms / 1000).toFixed(1)} s`)
      .join(' + ')}`,
  );
}

// ---- timed rows: every command on both kinds, at every size ------------------------------------------------
const rows = [{ name: 'node -e 0', argv: ['node', '-e', '0'] }];
const acceptRows = [{ name: 'node -e 0', argv: ['node', '-e', '0'] }];
for (const n of SIZES) {
  for (const kind of ['dir', 'pg']) {
    const { s, c } = builds[n][kind];
    const row = (cmd, fields) => ({ name: `${kind} ${cmd} @${size(n)}`, n, kind, cmd, ...fields });
    const mid = midSession(n, 'target');
    rows.push(row('session get', { argv: crux(s, 'session', 'get', mid) }));
    rows.push(row('session put', { argv: crux(s, 'session', 'put', mid, '{"step":1}') }));
    const fresh = counter(`new-${RUN_ID}-`);
    rows.push(row('session put (new id)', { before: (r) => (r.argv = crux(s, 'session', 'put', fresh(), '{}')) }));
    const toClose = counter(`close-${RUN_ID}-`);
    rows.push(row('session close', { before: (r) => (r.argv = crux(s, 'session', 'close', toClose(), '--outcome', 'completed')) }));
    rows.push(row('filtered list (--agent a)', { argv: crux(s, '--agent', 'a', 'session', 'list', '--json') }));
    rows.push(row('filtered list (--stranded)', { argv: crux(s, 'session', 'list', '--stranded', '--json') }));
    rows.push(row('limited list (--limit 50)', { argv: crux(s, 'session', 'list', '--limit', '50', '--json') }));
    rows.push(row('reap, nothing due', { argv: crux(s, 'session', 'reap', '--json') }));
    const source = counter(`src-${RUN_ID}-`);
    let minted = 0;
    rows.push(
      row('handoff mint', {
        before: (r) => (r.argv = crux(s, '--agent', 'a', 'handoff', 'mint', source(), '--to', 'b', '--out', join(work, `pkg-${kind}-${n}-${++minted}.json`))),
      }),
    );
    let accepted = 0;
    acceptRows.push(
      row('handoff accept', {
        before: (r) => (r.argv = crux(s, '--agent', 'b', 'handoff', 'accept', join(work, `pkg-${kind}-${n}-${++accepted}.json`), '--json')),
      }),
    );
    rows.push(row('case show', { argv: crux(c, 'case', 'show', builds[n].caseId, '--json') }));
    rows.push(row('retrieve (common words)', { argv: crux(c, 'case', 'retrieve', BOILERPLATE, '--json') }));
    rows.push(row('retrieve (rare words)', { argv: crux(c, 'case', 'retrieve', RARE.join(' '), '--json') }));
    rows.push(row('case record', { argv: crux(c, 'case', 'record', '--task', `${WORDS[5]} ${WORDS[9]} bench`, '--action', 'a', '--outcome', 'o') }));
  }
}
// The connection's cost: one point read over TCP + SCRAM against the same over the Unix socket, at the smallest size.
const small = builds[SIZES[0]];
const connRows = [{ name: 'node -e 0', argv: ['node', '-e', '0'] }];
if (socketUrl) {
  const mid = midSession(SIZES[0], 'target');
  connRows.push({ name: 'session get, dir', argv: crux(small.dir.s, 'session', 'get', mid) });
  connRows.push({ name: 'session get, TCP + SCRAM', argv: crux(small.pg.s, 'session', 'get', mid) });
  connRows.push({ name: 'session get, Unix socket', argv: crux(socketUrl(small.pg.s), 'session', 'get', mid) });
  connRows.push({ name: 'session put, TCP + SCRAM', argv: crux(small.pg.s, 'session', 'put', mid, '{"step":3}') });
  connRows.push({ name: 'session put, Unix socket', argv: crux(socketUrl(small.pg.s), 'session', 'put', mid, '{"step":3}') });
}

log(`bench: ${ROUNDS} interleaved rounds of ${rows.length} commands; load average ${loadavg()} …`);
const loadBefore = loadavg();
const timed = rows.map((r) => ({ ...r, env }));
const results = interleave(timed, { rounds: ROUNDS, warmup: 2 });
const peaks = peakOfRows(timed.slice(1), env);
const acceptTimed = acceptRows.map((r) => ({ ...r, env }));
const acceptResults = interleave(acceptTimed, { rounds: ROUNDS, warmup: 2 });
for (const [name, peak] of peakOfRows(acceptTimed.slice(1), env)) peaks.set(name, peak);
const conn =
  connRows.length > 1
    ? interleave(
        connRows.map((r) => ({ ...r, env })),
        { rounds: Math.max(ROUNDS, 21), warmup: 2 },
      )
    : [];
const largest = SIZES.at(-1);
const tail = TAIL_PUTS > 0 ? tailLatency(TAIL_PUTS, (i) => crux(builds[largest].pg.s, 'session', 'put', `tail-${RUN_ID}-${i}`, '{"step":1}'), env) : undefined;
const loadAfter = loadavg();

// ---- report ---------------------------------------------------------------------------------------------------
const base = results[0].median;
const acceptBase = acceptResults[0].median;
const cells = new Map();
for (const r of [...results.slice(1), ...acceptResults.slice(1)]) {
  const row = [...rows, ...acceptRows].find((x) => x.name === r.name);
  cells.set(`${row.kind}|${row.cmd}|${row.n}`, { ...r, ratio: r.median / (row.cmd === 'handoff accept' ? acceptBase : base), peak: peaks.get(r.name) });
}
const cmds = [...new Set([...rows, ...acceptRows].filter((r) => r.cmd).map((r) => r.cmd))];
const mib = (v) => (Number.isFinite(v) ? `${v.toFixed(0)} MiB` : 'n/a');
console.log(
  `\ncrux bench, PostgreSQL — ${new Date().toISOString()}, node ${process.version}, server ${new URL(server).host}, ${ROUNDS} interleaved rounds (+2 warm-up)`,
);
console.log(`node -e 0: ${base.toFixed(1)} ms (accept pass: ${acceptBase.toFixed(1)} ms); load average ${loadBefore} before, ${loadAfter} after\n`);
console.log(`| command | ${SIZES.map((n) => `dir @${size(n)} | pg @${size(n)}`).join(' | ')} |`);
console.log(`|---|${SIZES.map(() => '---|---').join('|')}|`);
const cell = (c) => (c === undefined ? '' : `${c.ratio.toFixed(2)}× (${c.median.toFixed(0)} ms, ${mib(c.peak)})`);
for (const cmd of cmds)
  console.log(`| ${cmd} | ${SIZES.map((n) => `${cell(cells.get(`dir|${cmd}|${n}`))} | ${cell(cells.get(`pg|${cmd}|${n}`))}`).join(' | ')} |`);

// Issue 19's targets: growth from the smallest to the largest size on PostgreSQL (ratio at the largest / ratio at
// the smallest, same run), and peak memory at every size.
const [lo, hi] = [SIZES[0], largest];
if (lo !== hi) {
  console.log(
    `\nGrowth on PostgreSQL ${size(lo)} → ${size(hi)} (ratio at ${size(hi)} / ratio at ${size(lo)}), pg / dir at ${size(hi)}, peak memory at ${size(hi)} (≤ 150 MiB):\n`,
  );
  console.log(`| command | pg @${size(lo)} | pg @${size(hi)} | growth | target | pg / dir @${size(hi)} | peak @${size(hi)} |`);
  console.log('|---|---|---|---|---|---|---|');
  for (const cmd of cmds) {
    const a = cells.get(`pg|${cmd}|${lo}`);
    const b = cells.get(`pg|${cmd}|${hi}`);
    const d = cells.get(`dir|${cmd}|${hi}`);
    if (!a || !b) continue;
    const g = b.ratio / a.ratio;
    const target = GROWTH_TARGETS[cmd];
    console.log(
      `| ${cmd} | ${a.ratio.toFixed(2)}× | ${b.ratio.toFixed(2)}× | ${g.toFixed(2)}× | ${target ? `≤ ${target}× ${g <= target ? 'met' : 'MISSED'}` : ''} | ${(b.median / d.median).toFixed(2)}× | ${mib(b.peak)}${b.peak > 150 ? ' MISSED' : ''} |`,
    );
  }
}
console.log(`\njournal copy of the data directory into PostgreSQL (≤ 200 MiB at 1M):\n`);
console.log('| size | journal | time | peak |');
console.log('|---|---|---|---|');
for (const c of copies)
  console.log(`| ${size(c.n)} | ${c.what} | ${(c.ms / 1000).toFixed(1)} s | ${mib(c.peakMiB)}${c.n >= 1_000_000 && c.peakMiB > 200 ? ' MISSED' : ''} |`);
if (conn.length > 0) {
  const cb = conn[0].median;
  console.log(`\nThe connection, at ${size(SIZES[0])} sessions, ${Math.max(ROUNDS, 21)} rounds (median, ratio to node -e 0 at ${cb.toFixed(1)} ms):\n`);
  for (const r of conn.slice(1)) console.log(`- ${r.name}: ${r.median.toFixed(1)} ms (${(r.median / cb).toFixed(2)}×)`);
  const by = Object.fromEntries(conn.map((r) => [r.name, r.median]));
  console.log(
    `- TCP + SCRAM cost over the Unix socket: get ${(by['session get, TCP + SCRAM'] - by['session get, Unix socket']).toFixed(1)} ms, put ${(by['session put, TCP + SCRAM'] - by['session put, Unix socket']).toFixed(1)} ms a call`,
  );
}
if (tail) {
  console.log(
    `\n${tail.count} new-id puts one after another on PostgreSQL at ${size(largest)}: p50 ${tail.p50.toFixed(0)} ms, p99 ${tail.p99.toFixed(0)} ms, max ${tail.max.toFixed(0)} ms; peak ${mib(tail.peakMiB)}`,
  );
}
