// `npm run bench`: crux's costs as ratios to `node -e 0`, measured side by side in one interleaved run.
// Every Node process runs without NODE_EXTRA_CA_CERTS (it adds ~42 ms to each start), on both sides.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchEnv, interleave } from './interleave.mjs';

const CRUX = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'bin', 'crux');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 25);
const work = fs.mkdtempSync(join(tmpdir(), 'crux-bench-'));
const env = benchEnv();
const log = (line) => process.stderr.write(`${line}\n`);

const crux = (dir, ...args) => ['node', CRUX, '--data-dir', dir, ...args];
function run(dir, args, input) {
  const r = spawnSync('node', [CRUX, '--data-dir', dir, ...args], { env, input, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`crux ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}
const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

// ---- data sets ---------------------------------------------------------------------------------------
function sessionLines(n) {
  let out = '';
  for (let i = 0; i < n; i++) out += `${JSON.stringify({ session_id: `s${i}`, state: { step: i, notes: 'n'.repeat(200), plan: ['a', 'b', 'c'] } })}\n`;
  return out;
}
const WORDS = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}${'xyzq'[i % 4]}`);
function caseLines(n) {
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const pick = () => WORDS[Math.floor(rand() ** 2 * WORDS.length)];
  let out = '';
  for (let i = 0; i < n; i++) {
    const task = Array.from({ length: 5 + Math.floor(rand() * 8) }, pick).join(' ');
    const tags = Array.from({ length: Math.floor(rand() * 3) }, pick);
    out += `${JSON.stringify({ task, action: `ran ${pick()} then ${pick()}`, outcome: rand() < 0.8 ? 'worked' : 'failed', success: rand() < 0.8, reward: Math.round(rand() * 100) / 100, tags })}\n`;
  }
  return out;
}

log(`bench: building data sets in ${work} …`);
const one = join(work, 'one');
run(one, ['session', 'put', 's0', '{"step":0}']);
const tenK = join(work, 'ten-k');
run(tenK, ['session', 'import', '-'], sessionLines(10_000));
run(tenK, ['session', 'put', 's1', '{"step":1}']);
const cases = join(work, 'cases');
let started = performance.now();
run(cases, ['case', 'import', '-'], caseLines(100_000));
const importS = (performance.now() - started) / 1000;
run(cases, ['case', 'record', '--task', `${WORDS[1]} ${WORDS[2]} warm`, '--action', 'a', '--outcome', 'o']);
const query = [WORDS[3], WORDS[10], WORDS[100], 'deploy'];

// A runaway agent: 150 puts of a 50 KB state to one session id.
const runaway = join(work, 'runaway');
const blob = JSON.stringify({ log: 'x'.repeat(50 * 1024 - 12) });
for (let i = 0; i < 150; i++) run(runaway, ['session', 'put', 'agent', '--add-tokens', '100'], blob);
const runawayBytes = fs.statSync(join(runaway, 'sessions.jsonl')).size;

const hookPayload = (event, fields = {}) => JSON.stringify({ session_id: 'cc-1', transcript_path: '/t.jsonl', cwd: '/src', hook_event_name: event, ...fields });
for (const dir of [one, cases]) run(dir, ['hook', 'claude-code'], hookPayload('SessionStart', { source: 'startup' }));

// ---- timed rows ------------------------------------------------------------------------------------------
const rows = [
  { name: 'node -e 0', argv: ['node', '-e', '0'] },
  { name: 'session get (1 session)', argv: crux(one, 'session', 'get', 's0') },
  { name: 'session put (1 session)', argv: crux(one, 'session', 'put', 's0', '{"step":1}') },
  { name: 'session get (10k sessions)', argv: crux(tenK, 'session', 'get', 's5000') },
  { name: 'session put (10k sessions)', argv: crux(tenK, 'session', 'put', 's5001', '{"step":2}') },
  { name: 'case retrieve (100k cases)', argv: crux(cases, 'case', 'retrieve', ...query, '--json') },
  { name: 'session get (runaway, after 150×50 KB)', argv: crux(runaway, 'session', 'get', 'agent') },
  // A Claude Code hook (SPEC §10.2): a touch of its session, and a prompt enriched from the 100k cases.
  { name: 'hook claude-code Stop (touch)', argv: crux(one, 'hook', 'claude-code'), input: hookPayload('Stop') },
  { name: 'hook claude-code UserPromptSubmit (100k)', argv: crux(cases, 'hook', 'claude-code'), input: hookPayload('UserPromptSubmit', { prompt: query.join(' ') }) },
];
if (has('sqlite3')) {
  const db = join(work, 'bench.db');
  execFileSync('sqlite3', [db, 'CREATE TABLE ev(id INTEGER PRIMARY KEY, body TEXT)']);
  rows.push({ name: 'context: sqlite3 one INSERT', argv: ['sqlite3', db, "INSERT INTO ev(body) VALUES('{\"step\":1}')"] });
}
if (has('jq')) rows.push({ name: 'context: jq + >> (append a line)', argv: ['sh', '-c', `jq -cn '{step:1}' >> ${join(work, 'jq.jsonl')}`] });

log(`bench: ${ROUNDS} interleaved rounds of ${rows.length} commands …`);
const results = interleave(rows.map((r) => ({ ...r, env })), { rounds: ROUNDS, warmup: 2 });
const base = results[0].median;

// journal check over 100k records and its memory peak, timed separately (it runs for seconds).
function timed(argv) {
  const t = performance.now();
  const wrap = fs.existsSync('/usr/bin/time') ? ['/usr/bin/time', '-f', '%M', ...argv] : argv;
  const r = spawnSync(wrap[0], wrap.slice(1), { env, maxBuffer: 1 << 30 });
  const ms = performance.now() - t;
  const kb = Number(String(r.stderr).trim().split('\n').at(-1));
  return { ms, rssMiB: Number.isFinite(kb) ? kb / 1024 : undefined };
}
const check = timed(crux(cases, 'journal', 'check', '--json'));
const retrieveMem = timed(crux(cases, 'case', 'retrieve', ...query, '--json'));

// 16 concurrent writers, 20 puts each.
async function concurrent(writers, puts) {
  const dir = join(work, 'concurrent');
  const t = performance.now();
  await Promise.all(Array.from({ length: writers }, (_, w) => (async () => {
    for (let i = 0; i < puts; i++) {
      await new Promise((ok, fail) => spawn('node', [CRUX, '--data-dir', dir, 'session', 'put', `w${w}-${i}`, '{}'], { env, stdio: 'ignore' })
        .on('exit', (code) => (code === 0 ? ok() : fail(new Error(`writer exited ${code}`)))));
    }
  })()));
  return { puts: writers * puts, s: (performance.now() - t) / 1000 };
}
const conc = await concurrent(16, 20);

// ---- report ------------------------------------------------------------------------------------------------
const pad = (s, n) => String(s).padEnd(n);
console.log(`\ncrux bench — ${new Date().toISOString()}, node ${process.version}, ${ROUNDS} interleaved rounds, NODE_EXTRA_CA_CERTS unset\n`);
console.log(`${pad('command', 42)} ${pad('median ms', 10)} ${pad('min–max ms', 16)} ratio to node -e 0`);
for (const r of results) {
  console.log(`${pad(r.name, 42)} ${pad(r.median.toFixed(1), 10)} ${pad(`${r.min.toFixed(1)}–${r.max.toFixed(1)}`, 16)} ${(r.median / base).toFixed(2)}×`);
}
console.log('');
console.log(`journal check, 100k case records + others: ${check.ms.toFixed(0)} ms (${(check.ms / base).toFixed(1)}× node -e 0)${check.rssMiB ? `, peak RSS ${check.rssMiB.toFixed(0)} MiB` : ''}`);
console.log(`case retrieve at 100k: peak RSS ${retrieveMem.rssMiB ? `${retrieveMem.rssMiB.toFixed(0)} MiB` : 'n/a (no /usr/bin/time)'}`);
console.log(`case import of 100,000 cases (one invocation): ${importS.toFixed(1)} s`);
console.log(`runaway agent: 150 puts of a 50 KB state → sessions.jsonl ${(runawayBytes / 1024).toFixed(0)} KiB = ${(runawayBytes / blob.length).toFixed(1)}× the state`);
console.log(`16 concurrent writers × 20 puts: ${conc.puts} puts in ${conc.s.toFixed(1)} s = ${(conc.puts / conc.s).toFixed(0)} puts/s`);
fs.rmSync(work, { recursive: true, force: true });
