// `npm run bench`, MCP rows: how long `crux mcp` takes to be of use to a client, from the spawn to its answer to
// `initialize`, then to `tools/list` (which every client sends next), then to a first tool call (a session_get
// of a missing session: a refusal, the whole path of a call) — beside `node -e 0` in ONE interleaved run, on a
// directory with one session and one case. Issue 23's goal: the start (the `initialize` answer) ≤ 80 ms.
// BENCH_MCP_ROUNDS (default 25) counted rounds after 2 warm-up rounds.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchEnv } from './interleave.mjs';

const ROOT = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const CRUX = join(ROOT, 'bin', 'crux');
const ROUNDS = Number(process.env.BENCH_MCP_ROUNDS ?? 25);
const WARMUP = 2;
const work = fs.mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'crux-bench-mcp-'));
const dataDir = join(work, 'data');
const env = benchEnv({ CRUX_DATA_DIR: dataDir, CRUX_AGENT: 'bench' });
spawnSync(CRUX, ['session', 'put', 's1', '{"step":1}'], { env });
spawnSync(CRUX, ['case', 'record', '--task', 'deploy the web app', '--action', 'ran it', '--outcome', 'ok'], { env });

const line = (message) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
const ms = (from) => Number(process.hrtime.bigint() - from) / 1e6;

/** One server: the times of its answers to initialize, tools/list and a first call, from the spawn. */
function serverOnce() {
  return new Promise((resolvePromise, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(CRUX, ['mcp'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    const marks = [];
    let buffered = '';
    child.on('error', reject);
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const answer = JSON.parse(buffered.slice(0, end));
        buffered = buffered.slice(end + 1);
        marks.push(ms(started));
        if (answer.id === 1) {
          child.stdin.write(line({ method: 'notifications/initialized' }));
          child.stdin.write(line({ id: 2, method: 'tools/list' }));
        } else if (answer.id === 2) {
          child.stdin.write(line({ id: 3, method: 'tools/call', params: { name: 'session_get', arguments: { session_id: 'missing' } } }));
        } else {
          child.stdin.end();
        }
      }
    });
    // The next round starts once this server has exited: two on 2 cores at once would time each other.
    child.on('exit', (code) => (marks.length === 3 ? resolvePromise(marks) : reject(new Error(`crux mcp exited ${code} after ${marks.length} answers`))));
    child.stdin.write(
      line({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } } }),
    );
  });
}

function nodeOnce() {
  const started = process.hrtime.bigint();
  spawnSync(process.execPath, ['-e', '0'], { env: benchEnv(), stdio: 'ignore' });
  return ms(started);
}

const rows = { 'node -e 0': [], 'crux mcp: initialize answered': [], '… tools/list answered': [], '… first tool call answered': [] };
const names = Object.keys(rows);
for (let round = 0; round < WARMUP + ROUNDS; round++) {
  const order = round % 2 === 0 ? ['node', 'mcp'] : ['mcp', 'node'];
  for (const which of order) {
    if (which === 'node') {
      const t = nodeOnce();
      if (round >= WARMUP) rows['node -e 0'].push(t);
    } else {
      const marks = await serverOnce();
      if (round >= WARMUP) for (const [i, t] of marks.entries()) rows[names[i + 1]].push(t);
    }
  }
}
fs.rmSync(work, { recursive: true, force: true });

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const quantile = (xs, q) => sorted(xs)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const median = (xs) => quantile(xs, 0.5);
const base = median(rows['node -e 0']);
const loadavg = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`\ncrux mcp, from the spawn (${ROUNDS} interleaved rounds, load average ${loadavg}):\n`);
console.log('| what | median | p90 | max | ratio to node -e 0 |');
console.log('|---|---|---|---|---|');
for (const [name, xs] of Object.entries(rows)) {
  console.log(
    `| ${name} | ${median(xs).toFixed(1)} ms | ${quantile(xs, 0.9).toFixed(1)} ms | ${Math.max(...xs).toFixed(1)} ms | ${(median(xs) / base).toFixed(2)}× |`,
  );
}
const start = median(rows['crux mcp: initialize answered']);
console.log(`\ncrux mcp start (initialize answered): ${start.toFixed(1)} ms; target ≤ 80 ms ${start <= 80 ? 'met' : 'MISSED'}`);
