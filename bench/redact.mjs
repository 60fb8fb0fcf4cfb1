// `node bench/redact.mjs` (`npm run bench` runs it): what redaction on the ways in (SPEC §7) costs, and how well it
// does. Before/after rows: crux as built here against the same tree built without redaction (or, with
// BENCH_REDACT_BEFORE=<ref>, crux at that commit), each on a data directory of its own with BENCH_REDACT_CASES cases (default
// 10000): a `case record`, and a Claude Code SessionEnd with --record-cases over a 1 MB transcript. CPU (user +
// system) of each process, BENCH_ROUNDS (default 15) interleaved rounds after 2 warm-up rounds, means (of 10 ms ticks). Then the
// corpora of test/fixtures/secrets, each text recorded through the built CLI (`case record --task`): the secrets
// removed, and the ordinary texts kept byte for byte.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchEnv } from './interleave.mjs';
import { childrenCpuMs } from './measure.mjs';
import { transcriptText } from './hooks.mjs';

const ROOT = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const CASES = Number(process.env.BENCH_REDACT_CASES ?? 10_000);
const NO_REDACTION = 'this tree without redaction';
const BEFORE = process.env.BENCH_REDACT_BEFORE ?? NO_REDACTION;
const env = benchEnv({ CRUX_NOW: '2026-12-01T12:00:00Z' });
const log = (line) => process.stderr.write(`${line}\n`);
const work = fs.mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'crux-bench-redact-'));

/**
 * The crux the rows compare against, built in a directory of its own (the repository's node_modules lent to it):
 * by default this tree with redaction taken out of the one function every way in calls (free-text.ts, keptText),
 * so that the rows differ by redaction alone; with BENCH_REDACT_BEFORE=<ref>, crux as it was at that commit.
 */
function buildBefore() {
  const dir = join(work, 'before-src');
  fs.mkdirSync(dir);
  if (BEFORE !== NO_REDACTION) execFileSync('sh', ['-c', `git -C "${ROOT}" archive "${BEFORE}" | tar -x -C "${dir}"`]);
  else {
    for (const file of execFileSync('git', ['-C', ROOT, 'ls-files'], { encoding: 'utf8' }).split('\n').filter(Boolean)) {
      if (fs.existsSync(join(ROOT, file))) fs.cpSync(join(ROOT, file), join(dir, file), { recursive: true });
    }
    const freeText = join(dir, 'src/shared/free-text.ts');
    const source = fs.readFileSync(freeText, 'utf8');
    const without = source.replace('return redactSecrets(scrubText(hidePrivate(text)));', 'return scrubText(hidePrivate(text)); // bench: no redaction');
    if (without === source) throw new Error('bench/redact.mjs: keptText is not as the bench expects (src/shared/free-text.ts)');
    fs.writeFileSync(freeText, without);
  }
  fs.symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  execFileSync('node', ['build.mjs'], { cwd: dir, stdio: 'ignore' });
  return join(dir, 'bin', 'crux');
}

const run = (bin, dir, args, input) => {
  const r = spawnSync('node', [bin, '--data-dir', dir, ...args], { env, input, maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`crux ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout.toString();
};

/** A data directory of `CASES` cases written by `bin`, and a 1 MB transcript beside it. */
function store(bin, name) {
  const dir = join(work, name);
  let lines = '';
  for (let i = 0; i < CASES; i++)
    lines += `${JSON.stringify({ task: `renew the tls cert on host-${i}`, action: 'certbot renew', outcome: 'worked', tags: ['tls'] })}\n`;
  run(bin, dir, ['case', 'import', '-'], lines);
  return dir;
}

const payload = (fields) =>
  JSON.stringify({
    transcript_path: '/t.jsonl',
    cwd: '/src/shop',
    permission_mode: 'default',
    hook_event_name: 'SessionEnd',
    reason: 'prompt_input_exit',
    ...fields,
  });

log(`bench redact: building ${BEFORE}`);
const builds = { before: buildBefore(), after: join(ROOT, 'bin', 'crux') };
const transcript = join(work, 'transcript.jsonl');
fs.writeFileSync(transcript, transcriptText(1 << 20));
let next = 0;
const rows = [];
for (const [label, bin] of Object.entries(builds)) {
  const dir = store(bin, label);
  rows.push({
    name: `case record (${label})`,
    row: 'case record',
    label,
    argv: () => [
      'node',
      bin,
      '--data-dir',
      dir,
      'case',
      'record',
      '--task',
      `renew the tls cert ${next++}; GITHUB_TOKEN is read from the env`,
      '--action',
      'a',
      '--outcome',
      'o',
    ],
  });
  rows.push({
    name: `hook SessionEnd --record-cases, 1 MB transcript (${label})`,
    row: 'hook SessionEnd --record-cases (1 MB transcript)',
    label,
    argv: () => ['node', bin, '--data-dir', dir, 'hook', 'claude-code', '--record-cases'],
    input: () => payload({ session_id: `cc-${next++}`, transcript_path: transcript }),
  });
}

const cpu = new Map(rows.map((r) => [r.name, []]));
for (let round = 0; round < ROUNDS + 2; round++) {
  for (const r of [...rows].sort(() => Math.random() - 0.5)) {
    const argv = r.argv();
    const before = childrenCpuMs();
    const done = spawnSync(argv[0], argv.slice(1), { env, input: r.input?.(), stdio: ['pipe', 'ignore', 'pipe'] });
    if (done.status !== 0) throw new Error(`${r.name} exited ${done.status}: ${done.stderr}`);
    if (round >= 2) cpu.get(r.name).push(childrenCpuMs() - before);
  }
}
// The mean: /proc counts CPU in 10 ms ticks, which a median would round every row to; the mean averages them out.
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(`\nRedaction on the ways in: CPU per process (mean of ${ROUNDS}), ${BEFORE} (before) and crux as built (after), ${CASES} cases\n`);
console.log('| command | before | after | after ÷ before |\n|---|---|---|---|');
for (const row of [...new Set(rows.map((r) => r.row))]) {
  const [b, a] = ['before', 'after'].map((label) => mean(cpu.get(rows.find((r) => r.row === row && r.label === label).name)));
  console.log(`| ${row} | ${b.toFixed(1)} ms | ${a.toFixed(1)} ms | ${(a / b).toFixed(2)}× |`);
}

// The corpora, through the CLI as built.
const corpus = (name) =>
  fs
    .readFileSync(join(ROOT, 'test/fixtures/secrets', name), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const kept = (text) =>
  JSON.parse(run(builds.after, join(work, 'corpus'), ['--json', 'case', 'record', '--task', text, '--action', 'a', '--outcome', 'o'])).case.task;
const secrets = corpus('secrets.jsonl');
let found = 0;
let removed = 0;
for (const row of secrets) {
  const text = kept(row.text);
  for (const s of row.secrets) {
    found += 1;
    if (!text.includes(s.value)) removed += 1;
  }
}
const ordinary = corpus('ordinary.jsonl');
const unchanged = ordinary.filter((row) => kept(row.text) === row.text).length;
console.log(`\nCorpora (test/fixtures/secrets), each text recorded through \`case record --task\`:\n`);
console.log('| corpus | texts | result |\n|---|---|---|');
console.log(`| secrets | ${secrets.length} | ${removed} of ${found} secrets removed (${((100 * removed) / found).toFixed(1)}%) |`);
console.log(`| ordinary text | ${ordinary.length} | ${unchanged} of ${ordinary.length} kept byte for byte |`);
fs.rmSync(work, { recursive: true, force: true });
