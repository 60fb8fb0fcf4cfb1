// Interleaved timing: every round runs each command once, in shuffled order, so all rows see the same machine.
import { spawnSync } from 'node:child_process';

/** Environment for every timed process: NODE_EXTRA_CA_CERTS costs ~42 ms per Node start, on both sides. */
export function benchEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function shuffle(xs) {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

function timeOnce(row) {
  if (row.before) row.before(row);
  const started = process.hrtime.bigint();
  const r = spawnSync(row.argv[0], row.argv.slice(1), {
    env: row.env ?? benchEnv(),
    input: row.input,
    stdio: [row.input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'],
    maxBuffer: 1 << 30,
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0 && !row.allowFail) throw new Error(`${row.name} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/** rows: [{name, argv, env?, input?, before?}]; returns [{name, median, min, max, n}]. */
export function interleave(rows, { rounds = 15, warmup = 2 } = {}) {
  const times = new Map(rows.map((r) => [r.name, []]));
  for (let round = 0; round < warmup + rounds; round++) {
    for (const row of shuffle(rows)) {
      const ms = timeOnce(row);
      if (round >= warmup) times.get(row.name).push(ms);
    }
  }
  return rows.map((r) => {
    const t = times.get(r.name);
    return { name: r.name, median: median(t), min: Math.min(...t), max: Math.max(...t), n: t.length };
  });
}
