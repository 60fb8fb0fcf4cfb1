// `npm run bench`: crux's costs as ratios to `node -e 0`, measured side by side in ONE interleaved run — every
// command at every store size, shuffled each round, so that all rows see the same machine.
// Every Node process runs without NODE_EXTRA_CA_CERTS (it adds ~42 ms to each start), on both sides.
//
// BENCH_SIZES (default 1,10000,100000,1000000) are the table's sizes; 2,000 and 200,000 are always built for
// the growth targets of issue 11. BENCH_ROUNDS (default 15) counted rounds, after 2 warm-up rounds.
// sqlite3 rows (SELECT by id, INSERT OR REPLACE, FTS5 bm25 top 5) run where `sqlite3` is installed.
// Beside the ratios: the peak memory of every row (one more run of each under /usr/bin/time), the tail latency
// of BENCH_TAIL_PUTS (default 10,000; 0 skips) new-id puts one after another at the largest size, the first
// call after a lost cache/ and the write after it against `journal check` (time and memory), a reap closing 1% at 2k and 200k (cost
// per reaped session), and 16 writers × 20 puts against one
// writer's 320: CPU per put (the children's user + system time, from /proc/self/stat), wall and puts/s, beside
// `node -e 0` started the same way (the machine's own cost of 16 processes at once, which no put can go under).
// Where util-linux `script` is installed, `session get` and `session list` also run on a pseudo-terminal (a
// list there stops at 50 rows); the limited lists, the terminal list and completion are set against the get.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchEnv, interleave } from './interleave.mjs';
import { hookRows } from './hooks.mjs';
import { peakOfRows, runMeasured, tailLatency, writersAtOnce } from './measure.mjs';
import { BOILERPLATE, caseLines, firstCaseId, GROWTH_TARGETS, HOUR, midSession, NOW, RARE, sessionLines, WORDS } from './data.mjs';

const CRUX = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'bin', 'crux');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
/**
 * A data directory copied as `cp -a` copies it: with the journals' nanosecond mtimes, so that its caches hold as they
 * do for the original (fs.cpSync sets another mtime: a journal of the same size then fails its binding, and the first
 * write after the copy rebuilt the index, the 1.2 s "worst case write" of an earlier run).
 */
const copyTree = (from, to) => execFileSync('cp', ['-a', from, to]);
const SIZES = (process.env.BENCH_SIZES ?? '1,10000,100000,1000000').split(',').map(Number);
const GROWTH = [2_000, 200_000];
const ALL_SIZES = [...new Set([...SIZES, ...GROWTH])].sort((a, b) => a - b);
// BENCH_REUSE=<dir>: time the data sets a kept run (BENCH_KEEP=1) built there, without building them again.
const REUSE = process.env.BENCH_REUSE;
const TAIL_PUTS = Number(process.env.BENCH_TAIL_PUTS ?? 10_000);
const work = REUSE ?? fs.mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'crux-bench-'));
const RUN_ID = Date.now().toString(36);
const env = benchEnv({ CRUX_NOW: '2026-12-01T12:00:00Z' });
const log = (line) => process.stderr.write(`${line}\n`);

const crux = (dir, ...args) => ['node', CRUX, '--data-dir', dir, ...args];
function run(dir, args, input, extraEnv = {}) {
  const r = spawnSync('node', [CRUX, '--data-dir', dir, ...args], { env: { ...env, ...extraEnv }, input, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`crux ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}
const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const HAS_SCRIPT = has('script');
const shellWord = (w) => `'${w.replace(/'/g, `'\\''`)}'`;
const size = (n) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));

// The store key of the encrypted copies (SPEC §13: a get on an encrypted store costs at most 1.2× one on a plain one).
const KEY_FILE = join(work, 'store.key');
if (!fs.existsSync(KEY_FILE)) run(join(work, 'no-store'), ['key', 'new', '--out', KEY_FILE]);
const builds = {};
for (const n of ALL_SIZES) {
  const t = performance.now();
  const s = join(work, `s-${n}`);
  const c = join(work, `c-${n}`);
  const e = join(work, `e-${n}`);
  // The same cases on an encrypted store (their words indexed as keyed hashes: a common-word retrieve ≤ 1.3× the plain one).
  const ce = join(work, `ce-${n}`);
  if (!REUSE) {
    for (let from = 0; from < n; from += 250_000) run(s, ['session', 'import', '-'], sessionLines(from, Math.min(n, from + 250_000), n));
    run(s, ['session', 'put', 'target', '{"step":0}']);
    for (let from = 0; from < n; from += 250_000)
      run(e, ['--key-file', KEY_FILE, 'session', 'import', '-'], sessionLines(from, Math.min(n, from + 250_000), n));
    run(e, ['--key-file', KEY_FILE, 'session', 'put', 'target', '{"step":0}']);
    run(c, ['case', 'import', '-'], caseLines(n));
    run(ce, ['--key-file', KEY_FILE, 'case', 'import', '-'], caseLines(n));
  }
  // Agent a's handoff sources (one per timed mint), put one by one.
  // One more of each than the interleaved runs use: the peak-memory pass runs every row once more.
  for (let i = 0; i < ROUNDS + 3; i++) run(s, ['--agent', 'a', 'session', 'put', `src-${RUN_ID}-${i}`, '{"step":0}']);
  // Sessions to close (one per timed close).
  for (let i = 0; i < ROUNDS + 3; i++) run(s, ['session', 'put', `close-${RUN_ID}-${i}`, '{"step":0}']);
  const caseId = firstCaseId(fs, join(c, 'cases.jsonl'));
  builds[n] = { s, c, e, ce, caseId, ms: performance.now() - t };
  log(`bench: built ${size(n)} sessions and cases in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

function counter(prefix) {
  let i = 0;
  return () => `${prefix}${i++}`;
}

// ---- timed rows ------------------------------------------------------------------------------------------
const rows = [{ name: 'node -e 0', argv: ['node', '-e', '0'] }];
const at = (n, name) => `${name} @${size(n)}`;
for (const n of ALL_SIZES) {
  const { s, c, e, ce, caseId } = builds[n];
  // A mid-journal session that is active (put and get both apply), or one put after the import at size 1.
  const mid = midSession(n, 'target');
  rows.push({ name: at(n, 'session get'), argv: crux(s, 'session', 'get', mid), n, cmd: 'session get' });
  rows.push({ name: at(n, 'session get (encrypted)'), argv: crux(e, '--key-file', KEY_FILE, 'session', 'get', mid), n, cmd: 'session get (encrypted)' });
  rows.push({ name: at(n, 'session put (replace)'), argv: crux(s, 'session', 'put', mid, '{"step":1}'), n, cmd: 'session put' });
  const fresh = counter(`new-${RUN_ID}-`);
  rows.push({
    name: at(n, 'session put (new id)'),
    n,
    cmd: 'session put (new id)',
    before(row) {
      row.argv = crux(s, 'session', 'put', fresh(), '{}');
    },
  });
  const toClose = counter(`close-${RUN_ID}-`);
  rows.push({
    name: at(n, 'session close'),
    n,
    cmd: 'session close',
    before(row) {
      row.argv = crux(s, 'session', 'close', toClose(), '--outcome', 'completed');
    },
  });
  rows.push({ name: at(n, '--agent a session list'), argv: crux(s, '--agent', 'a', 'session', 'list', '--json'), n, cmd: 'filtered list (--agent a)' });
  rows.push({ name: at(n, 'session list --stranded'), argv: crux(s, 'session', 'list', '--stranded', '--json'), n, cmd: 'filtered list (--stranded)' });
  // Limited lists read only the rows they show and count the rest from the index (a terminal's list stops at 50).
  rows.push({ name: at(n, 'session list --limit 50'), argv: crux(s, 'session', 'list', '--limit', '50', '--json'), n, cmd: 'limited list (--limit 50)' });
  rows.push({
    name: at(n, 'session list --stranded --limit 5'),
    argv: crux(s, 'session', 'list', '--stranded', '--limit', '5', '--json'),
    n,
    cmd: 'limited list (--stranded --limit 5)',
  });
  // What Tab runs (`crux __complete session <prefix>`): the ids from the prefix on, in order, at most 200.
  rows.push({ name: at(n, '__complete session s1'), argv: crux(s, '__complete', 'session', 's1'), n, cmd: 'complete ids (prefix s1)' });
  // On a pseudo-terminal (util-linux script), where a list stops at 50 rows and its last line says how many more.
  if (HAS_SCRIPT) {
    const line = (...args) =>
      crux(s, ...args)
        .map(shellWord)
        .join(' ');
    const onTty = (...args) => ['script', '-qefc', `stty cols 120 rows 50; ${line(...args)}`, '/dev/null'];
    rows.push({ name: at(n, 'terminal session get'), argv: onTty('session', 'get', mid), n, cmd: 'terminal: session get' });
    rows.push({ name: at(n, 'terminal session list'), argv: onTty('session', 'list'), n, cmd: 'terminal: session list (50 rows)' });
  }
  rows.push({ name: at(n, 'session reap (nothing due)'), argv: crux(s, 'session', 'reap', '--json'), n, cmd: 'reap, nothing due' });
  const source = counter(`src-${RUN_ID}-`);
  rows.push({
    name: at(n, 'handoff mint'),
    n,
    cmd: 'handoff mint',
    before(row) {
      row.argv = crux(
        s,
        '--agent',
        'a',
        'handoff',
        'mint',
        source(),
        '--to',
        'b',
        '--out',
        join(work, `pkg-${RUN_ID}-${n}-${(row.count = (row.count ?? 0) + 1)}.json`),
      );
    },
  });
  rows.push({ name: at(n, 'case show'), argv: crux(c, 'case', 'show', caseId, '--json'), n, cmd: 'case show' });
  // Limited lists newest first by outcome and by tag read the cases they show (the bank's columns and postings).
  rows.push({
    name: at(n, 'case list --only-failure --limit 20'),
    argv: crux(c, 'case', 'list', '--only-failure', '--limit', '20', '--json'),
    n,
    cmd: 'case list (--only-failure --limit 20)',
  });
  rows.push({
    name: at(n, `case list --tag ${WORDS[0]} --limit 20`),
    argv: crux(c, 'case', 'list', '--tag', WORDS[0], '--limit', '20', '--json'),
    n,
    cmd: 'case list (--tag --limit 20)',
  });
  rows.push({ name: at(n, 'case retrieve, 5 common words'), argv: crux(c, 'case', 'retrieve', BOILERPLATE, '--json'), n, cmd: 'retrieve (common words)' });
  rows.push({
    name: at(n, 'case retrieve, 5 common words (encrypted)'),
    argv: crux(ce, '--key-file', KEY_FILE, 'case', 'retrieve', BOILERPLATE, '--json'),
    n,
    cmd: 'retrieve (common words, encrypted)',
  });
  rows.push({ name: at(n, 'case retrieve, 5 rare words'), argv: crux(c, 'case', 'retrieve', RARE.join(' '), '--json'), n, cmd: 'retrieve (rare words)' });
  rows.push({
    name: at(n, 'case record'),
    argv: crux(c, 'case', 'record', '--task', `${WORDS[5]} ${WORDS[9]} bench`, '--action', 'a', '--outcome', 'o'),
    n,
    cmd: 'case record',
  });
}
// A Claude Code hook (SPEC §10.2): a touch of its session (over the sessions), and the rows of bench/hooks.mjs
// over the case bank: SessionStart, UserPromptSubmit, Stop and SessionEnd with --record-cases over 1 MB.
const hookPayload = (event, fields = {}) => JSON.stringify({ session_id: 'cc-1', transcript_path: '/t.jsonl', cwd: '/src', hook_event_name: event, ...fields });
for (const n of ALL_SIZES.filter((x) => SIZES.includes(x))) {
  const { s, c } = builds[n];
  run(s, ['hook', 'claude-code'], hookPayload('SessionStart', { source: 'startup' }));
  rows.push({ name: at(n, 'hook claude-code Stop (touch)'), argv: crux(s, 'hook', 'claude-code'), input: hookPayload('Stop'), n, cmd: 'hook Stop (touch)' });
  rows.push(
    ...hookRows({ dir: c, work, crux, name: (label) => at(n, label), prompt: RARE.join(' '), extra: { n } }).filter((row) => row.cmd !== 'hook Stop (touch)'),
  );
}
// accept needs packages minted first: the mint rows above make them as they run, so accept runs in a second pass.

let sqliteRows = 0;
if (has('sqlite3')) {
  for (const n of ALL_SIZES) {
    const db = join(work, `sq-${n}.db`);
    const built = fs.existsSync(db);
    const sql = [
      'PRAGMA journal_mode=WAL;',
      'CREATE TABLE s(id TEXT PRIMARY KEY, body TEXT);',
      'CREATE VIRTUAL TABLE f USING fts5(task);',
      'BEGIN;',
      `WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < ${n - 1}) INSERT INTO s SELECT 's' || i, printf('{"step":%d,"notes":"%s"}', i, substr(hex(zeroblob(100)), 1, 200)) FROM k;`,
      'COMMIT;',
    ].join('\n');
    if (!built) {
      execFileSync('sqlite3', [db], { input: sql });
      const tasks = join(work, `tasks-${n}.csv`);
      fs.writeFileSync(
        tasks,
        `${caseLines(n)
          .split('\n')
          .filter(Boolean)
          .map((l) => `"${JSON.parse(l).task}"`)
          .join('\n')}\n`,
      );
      execFileSync('sqlite3', [db], { input: `.mode csv\n.import ${tasks} f\n` });
    }
    rows.push({
      name: at(n, 'sqlite3 SELECT by id'),
      argv: ['sqlite3', db, `SELECT body FROM s WHERE id = 's${Math.floor(n / 2)}'`],
      n,
      cmd: 'sqlite3 SELECT by id',
    });
    rows.push({
      name: at(n, 'sqlite3 INSERT OR REPLACE (WAL, synchronous=FULL)'),
      argv: ['sqlite3', db, `PRAGMA synchronous=FULL; INSERT OR REPLACE INTO s VALUES('s${Math.floor(n / 2)}', '{"step":1}')`],
      n,
      cmd: 'sqlite3 INSERT OR REPLACE',
    });
    rows.push({
      name: at(n, 'FTS5 bm25 top 5, common words'),
      argv: ['sqlite3', db, `SELECT rowid FROM f WHERE f MATCH '${BOILERPLATE.split(' ').join(' OR ')}' ORDER BY bm25(f) LIMIT 5`],
      n,
      cmd: 'FTS5 (common words)',
    });
    rows.push({
      name: at(n, 'FTS5 bm25 top 5, rare words'),
      argv: ['sqlite3', db, `SELECT rowid FROM f WHERE f MATCH '${RARE.join(' OR ')}' ORDER BY bm25(f) LIMIT 5`],
      n,
      cmd: 'FTS5 (rare words)',
    });
    sqliteRows += 4;
  }
} else log('bench: sqlite3 is not installed: its rows are skipped');

log(`bench: ${ROUNDS} interleaved rounds of ${rows.length} commands …`);
// The same row objects for the peak-memory pass: a row's `before` keeps its count (mint's package names) on it.
const timed = rows.map((r) => ({ ...r, env }));
const results = interleave(timed, { rounds: ROUNDS, warmup: 2 });
const base = results[0].median;
const peaks = peakOfRows(timed, env);

// Second pass: accept the packages the mint rows made (each once), interleaved with node -e 0 again.
const acceptRows = [{ name: 'node -e 0', argv: ['node', '-e', '0'] }];
for (const n of ALL_SIZES) {
  const { s } = builds[n];
  let k = 0;
  acceptRows.push({
    name: at(n, 'handoff accept'),
    n,
    cmd: 'handoff accept',
    before(row) {
      row.argv = crux(s, '--agent', 'b', 'handoff', 'accept', join(work, `pkg-${RUN_ID}-${n}-${++k}.json`), '--json');
    },
  });
}
const acceptTimed = acceptRows.map((r) => ({ ...r, env }));
const accepted = interleave(acceptTimed, { rounds: ROUNDS, warmup: 2 });
const acceptBase = accepted[0].median;
for (const [name, peak] of peakOfRows(acceptTimed.slice(1), env)) peaks.set(name, peak);

// Retrieve before and after PENDING single `case record`s, interleaved (the 200k case store): 517 records of
// ~385 bytes stay under the 256 KiB after which the snapshot is rewritten, so they all follow it. The first
// retrieve folds them into the snapshot's delta (a warm-up round), the timed ones apply it.
const PENDING = 517;
const { c: c200 } = builds[200_000];
const afterPending = join(work, `c-200k-after-${PENDING}`);
const pendingBuilt = fs.existsSync(afterPending);
if (!pendingBuilt) copyTree(c200, afterPending);
for (let i = 0; i < (pendingBuilt ? 0 : PENDING); i++)
  run(afterPending, ['case', 'record', '--task', `${WORDS[i % 3000]} ${WORDS[(i * 7) % 3000]} pending`, '--action', 'a', '--outcome', 'o']);
const pending = interleave(
  [
    { name: 'node -e 0', argv: ['node', '-e', '0'] },
    { name: 'retrieve (rare) before', argv: crux(c200, 'case', 'retrieve', RARE.join(' '), '--json') },
    { name: `retrieve (rare) after ${PENDING} records`, argv: crux(afterPending, 'case', 'retrieve', RARE.join(' '), '--json') },
    { name: 'retrieve (common) before', argv: crux(c200, 'case', 'retrieve', BOILERPLATE, '--json') },
    { name: `retrieve (common) after ${PENDING} records`, argv: crux(afterPending, 'case', 'retrieve', BOILERPLATE, '--json') },
  ].map((r) => ({ ...r, env })),
  { rounds: ROUNDS, warmup: 2 },
);

// A lost cache/ (or a `cp -a` that left it behind): the first read rebuilds what was lost (time and memory), the
// write after it goes through it; `journal check` (which reads and verifies every record) is the yardstick. Medians of 3.
const med3 = (xs) => [...xs].sort((x, y) => x - y)[1];
const afterLoss = [];
for (const n of ALL_SIZES) {
  const { s, c } = builds[n];
  // The sessions' index (streamed, in bounded memory), then the case bank (its snapshot and its index, both lost,
  // built in one streamed scan by whichever call comes first). The second call is a write that needs the index
  // (a put, a record): it must not pay for another whole scan.
  for (const [store, dir, read, write] of [
    ['sessions', s, ['session', 'get', 'target'], (k) => ['session', 'put', `lost-${RUN_ID}-${k}`, '{"step":1}']],
    [
      'cases',
      c,
      ['case', 'retrieve', RARE.join(' '), '--json'],
      (k) => ['case', 'record', '--task', `lost cache ${RUN_ID} ${k}`, '--action', 'a', '--outcome', 'o'],
    ],
  ]) {
    const firsts = [],
      seconds = [],
      checks = [];
    for (let k = 0; k < 3; k++) {
      fs.rmSync(join(dir, 'cache'), { recursive: true, force: true });
      firsts.push(runMeasured(crux(dir, ...read), { env }));
      seconds.push(runMeasured(crux(dir, ...write(k)), { env }));
      checks.push(runMeasured(crux(dir, 'journal', 'check', '--json'), { env }));
    }
    const first = med3(firsts.map((r) => r.ms)),
      check = med3(checks.map((r) => r.ms));
    const peak = Math.max(...firsts.map((r) => r.peakMiB ?? NaN));
    afterLoss.push({
      n,
      store,
      first,
      second: med3(seconds.map((r) => r.ms)),
      secondPeak: Math.max(...seconds.map((r) => r.peakMiB ?? NaN)),
      check,
      peak,
      checkPeak: Math.max(...checks.map((r) => r.peakMiB ?? NaN)),
    });
  }
}

// A reap that closes 1% of the store (the sessions of the first expiry slot, 2.5 h on), at 2k and 200k: its
// cost per reaped session should not grow with the store (the index takes the closes as one frozen run and one
// bounded merge step, never a base rewrite). Each run on a fresh copy; medians of 3.
const REAP_NOW = new Date(NOW + 2.5 * HOUR).toISOString();
const reapEnv = benchEnv({ CRUX_NOW: REAP_NOW });
const reaps = [];
for (const n of GROWTH) {
  const times = [];
  const peaks = [];
  let count = 0;
  for (let k = 0; k < 3; k++) {
    const copy = join(work, `reap-${n}-${RUN_ID}`);
    fs.rmSync(copy, { recursive: true, force: true });
    copyTree(builds[n].s, copy);
    count = JSON.parse(run(copy, ['session', 'reap', '--dry-run', '--json'], undefined, { CRUX_NOW: REAP_NOW })).count;
    const r = runMeasured(crux(copy, 'session', 'reap', '--json'), { env: reapEnv });
    times.push(r.ms);
    peaks.push(r.peakMiB ?? NaN);
    fs.rmSync(copy, { recursive: true, force: true });
  }
  reaps.push({ n, count, ms: med3(times), peak: Math.max(...peaks) });
}

// Tail latency: puts of new ids one after another at the largest size (each adds an index entry, so the index
// log is folded into the base along the way).
const largest = ALL_SIZES.at(-1);
const tail = TAIL_PUTS > 0 ? tailLatency(TAIL_PUTS, (i) => crux(builds[largest].s, 'session', 'put', `tail-${RUN_ID}-${i}`, '{"step":1}'), env) : undefined;

// The case bank's writes at the largest size, on a copy of its store: records of ~6.5 KB alternating with
// retrieves that mark what they return as reused, enough of them (~2.3 MB of journal at 1M) that the snapshot is
// rewritten along the way, in bounded steps: the worst call against the median, and the peak of any call.
const CASE_WRITES = Number(process.env.BENCH_CASE_WRITES ?? 800);
let caseWrites;
if (CASE_WRITES > 0) {
  const copy = join(work, `case-writes-${RUN_ID}`);
  fs.rmSync(copy, { recursive: true, force: true });
  copyTree(builds[largest].c, copy);
  let seed = 11;
  const pick = () => WORDS[Math.floor(((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) ** 2 * WORDS.length)];
  const times = { record: [], retrieve: [] };
  let peak = 0;
  for (let i = 0; i < CASE_WRITES; i++) {
    const record = i % 2 === 0;
    const input = record
      ? JSON.stringify({
          task: `the ${Array.from({ length: 6 }, pick).join(' ')}`,
          action: `ran ${pick()}`,
          outcome: 'worked',
          context: Array.from({ length: 800 }, pick).join(' ').slice(0, 6300),
        })
      : undefined;
    const argv = record
      ? crux(copy, 'case', 'record', '--stdin', '--quiet')
      : crux(copy, 'case', 'retrieve', RARE[i % 5], pick(), pick(), '--mark-reused', '--json');
    const r = runMeasured(argv, { env, input });
    times[record ? 'record' : 'retrieve'].push(r.ms);
    peak = Math.max(peak, r.peakMiB ?? 0);
  }
  const all = [...times.record, ...times.retrieve].sort((a, b) => a - b);
  const q = (xs, f) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(f * xs.length))];
  caseWrites = {
    count: CASE_WRITES,
    p50: q(all, 0.5),
    p99: q(all, 0.99),
    max: all.at(-1),
    record: q(times.record, 0.5),
    retrieve: q(times.retrieve, 0.5),
    peak,
  };
  fs.rmSync(copy, { recursive: true, force: true });
}

// 16 concurrent writers × 20 puts against one writer's 320, each in a fresh directory: CPU per put.
const putIn = (dir) => (w, i) => crux(dir, 'session', 'put', `w${w}-${i}`, '{}');
// `node -e 0` on the same harness, alternated with the puts: what 16 processes at once on this machine's cores cost
// any Node start (cache and scheduler contention), so that the put's ratio can be read over the machine's own.
const nodeStart = () => [process.execPath, '-e', '0'];
const nodeAlone = await writersAtOnce(1, 320, nodeStart, env);
const alone = await writersAtOnce(1, 320, putIn(join(work, 'alone')), env);
const nodeConc = await writersAtOnce(16, 20, nodeStart, env);
const conc = await writersAtOnce(16, 20, putIn(join(work, 'concurrent')), env);

// ---- report ------------------------------------------------------------------------------------------------
const ratio = (ms, b = base) => `${(ms / b).toFixed(2)}×`;
const byCmd = new Map();
for (const r of [...results.slice(1), ...accepted.slice(1)]) {
  const row = [...rows, ...acceptRows].find((x) => x.name === r.name);
  if (!byCmd.has(row.cmd)) byCmd.set(row.cmd, new Map());
  byCmd.get(row.cmd).set(row.n, { ...r, b: accepted.includes(r) ? acceptBase : base });
}
console.log(`\ncrux bench — ${new Date().toISOString()}, node ${process.version}, ${ROUNDS} interleaved rounds (+2 warm-up), NODE_EXTRA_CA_CERTS unset`);
console.log(
  `node -e 0: ${base.toFixed(1)} ms (accept pass: ${acceptBase.toFixed(1)} ms); load average ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`,
);
console.log(`| command | ${SIZES.map(size).join(' | ')} |`);
console.log(`|---|${SIZES.map(() => '---').join('|')}|`);
for (const [cmd, bySize] of byCmd) {
  const cell = (r) => `${ratio(r.median, r.b)} (${r.median.toFixed(0)} ms${peaks.get(r.name) === undefined ? '' : `, ${peaks.get(r.name).toFixed(0)} MiB`})`;
  console.log(`| ${cmd} | ${SIZES.map((n) => (bySize.has(n) ? cell(bySize.get(n)) : '')).join(' | ')} |`);
}
console.log(`\nGrowth 2k → 200k (ratio at 200k / ratio at 2k, same run):\n`);
console.log('| command | 2k | 200k | growth | target |');
console.log('|---|---|---|---|---|');
for (const [cmd, bySize] of byCmd) {
  const a = bySize.get(2_000),
    b = bySize.get(200_000);
  if (!a || !b) continue;
  const g = b.median / b.b / (a.median / a.b);
  const target = GROWTH_TARGETS[cmd];
  console.log(
    `| ${cmd} | ${ratio(a.median, a.b)} | ${ratio(b.median, b.b)} | ${g.toFixed(2)}× | ${target ? `≤ ${target}× ${g <= target ? 'met' : 'MISSED'}` : ''} |`,
  );
}
// Against `session get` at the same size, in the same run (issues 22 and 23: a limited list costs about a get).
const LIKE_GET = [
  ['session get (encrypted)', 'session get', 1.2],
  ['retrieve (common words, encrypted)', 'retrieve (common words)', 1.3],
  ['limited list (--limit 50)', 'session get', 1.3],
  ['limited list (--stranded --limit 5)', 'session get', 1.3],
  ['terminal: session list (50 rows)', 'terminal: session get', 1.3],
  ['complete ids (prefix s1)', 'session get', undefined],
];
console.log('\nAgainst a like command (median / median of the other at that size; completion: target under 1 s):\n');
console.log(`| command | ${SIZES.map(size).join(' | ')} | target |`);
console.log(`|---|${SIZES.map(() => '---').join('|')}|---|`);
for (const [cmd, get, target] of LIKE_GET) {
  const mine = byCmd.get(cmd);
  const gets = byCmd.get(get);
  if (mine === undefined || gets === undefined) continue;
  const cells = SIZES.map((n) =>
    mine.has(n) && gets.has(n) ? `${(mine.get(n).median / gets.get(n).median).toFixed(2)}× (${mine.get(n).median.toFixed(0)} ms)` : '',
  );
  console.log(`| ${cmd} | ${cells.join(' | ')} | ${target === undefined ? '< 1,000 ms' : `≤ ${target}× of ${get}`} |`);
}
const pb = pending[0].median;
const [rb, ra, cb, ca] = pending.slice(1).map((r) => r.median);
console.log(
  `\nretrieve at 200k before / after ${PENDING} single records: rare ${ratio(rb, pb)} → ${ratio(ra, pb)} (${(ra / rb).toFixed(2)}×), common ${ratio(cb, pb)} → ${ratio(ca, pb)} (${(ca / cb).toFixed(2)}×); target ≤ 1.15×`,
);
console.log(
  `\nFirst call after cache/ was lost (it rebuilds what was lost: a session get, a rare-word case retrieve), then a write (a put, a record), against journal check, medians of 3 (targets: ≤ 2×, ≤ 256 MiB):\n`,
);
console.log('| store | size | first call | its peak | then a write | its peak | journal check | its peak | first / check |');
console.log('|---|---|---|---|---|---|---|---|---|');
const mib = (v) => (Number.isFinite(v) ? `${v.toFixed(0)} MiB` : 'n/a');
for (const r of afterLoss)
  console.log(
    `| ${r.store} | ${size(r.n)} | ${r.first.toFixed(0)} ms | ${mib(r.peak)} | ${r.second.toFixed(0)} ms | ${mib(r.secondPeak)} | ${r.check.toFixed(0)} ms | ${mib(r.checkPeak)} | ${(r.first / r.check).toFixed(2)}× |`,
  );
console.log(`\nA reap closing 1% of the store (fresh copies, medians of 3; per reaped session after node -e 0):\n`);
console.log('| size | reaped | reap | its peak | per reaped session |');
console.log('|---|---|---|---|---|');
const perReaped = (r) => (r.ms - base) / Math.max(1, r.count);
for (const r of reaps) console.log(`| ${size(r.n)} | ${r.count} | ${r.ms.toFixed(0)} ms | ${mib(r.peak)} | ${perReaped(r).toFixed(2)} ms |`);
if (reaps.length === 2) console.log(`per reaped session, 200k / 2k: ${(perReaped(reaps[1]) / perReaped(reaps[0])).toFixed(2)}× (target: flat)`);
if (tail) {
  const t = tail;
  console.log(
    `\n${t.count} new-id puts one after another at ${size(largest)}: p50 ${t.p50.toFixed(0)} ms, p99 ${t.p99.toFixed(0)} ms, p99.9 ${t.p999.toFixed(0)} ms, max ${t.max.toFixed(0)} ms (${(t.max / t.p50).toFixed(2)}× the median); peak ${mib(t.peakMiB)}`,
  );
}
if (caseWrites) {
  const c = caseWrites;
  console.log(
    `${c.count} case writes at ${size(largest)} (records of ~6.5 KB alternating with retrieve --mark-reused; the snapshot rewritten in steps along the way): p50 ${c.p50.toFixed(0)} ms (record ${c.record.toFixed(0)}, retrieve ${c.retrieve.toFixed(0)}), p99 ${c.p99.toFixed(0)} ms, max ${c.max.toFixed(0)} ms (${(c.max / c.p50).toFixed(2)}× the median); peak ${mib(c.peak)}`,
  );
}
const perPut = (r) => (r.cpuPerPutMs === undefined ? 'n/a' : `${r.cpuPerPutMs.toFixed(1)} ms`);
const cpuRatio = (c, a) => (c.cpuPerPutMs && a.cpuPerPutMs ? c.cpuPerPutMs / a.cpuPerPutMs : undefined);
const putTax = cpuRatio(conc, alone);
const nodeTax = cpuRatio(nodeConc, nodeAlone);
console.log(
  `writers: 1 × 320 puts ${alone.s.toFixed(1)} s, CPU ${perPut(alone)} a put; 16 × 20 puts ${conc.s.toFixed(1)} s (${(conc.puts / conc.s).toFixed(0)} puts/s), CPU ${perPut(conc)} a put = ${putTax ? putTax.toFixed(2) : 'n/a'}× alone${conc.failed + alone.failed > 0 ? `; ${conc.failed + alone.failed} puts failed (a loaded machine: exit 75)` : ''}`,
);
console.log(
  `node -e 0 on the same harness: 1 × 320 CPU ${perPut(nodeAlone)} a start, 16 × 20 ${perPut(nodeConc)} = ${nodeTax ? nodeTax.toFixed(2) : 'n/a'}× (the machine's own tax on 16 processes at once); the put's tax over it: ${putTax && nodeTax ? (putTax / nodeTax).toFixed(2) : 'n/a'}×`,
);
console.log(`builds: ${ALL_SIZES.map((n) => `${size(n)} ${(builds[n].ms / 1000).toFixed(1)} s`).join(', ')} (session + case imports)`);
if (sqliteRows === 0) console.log('sqlite3 not installed: no sqlite3/FTS5 rows');
if (!process.env.BENCH_KEEP && !REUSE) fs.rmSync(work, { recursive: true, force: true });
else log(`bench: data kept in ${work}`);
