// The bench's data sets, shared by bench/run.mjs (data directories) and bench/pg.mjs (PostgreSQL beside them), so
// that both time the same commands over the same sessions and cases.
//
// Sessions: 70% closed, 10% active and fresh, 20% active with expires_at in 20 hourly slots from 2 h ahead
// (nothing due: reap finds none), and 24 active and stale at every size (evenly spread, so that `--stranded`'s
// answer is the same at every size, as `--agent a`'s is). Agent a owns only its handoff sources.
export const NOW = Date.parse('2026-12-01T12:00:00Z');
export const HOUR = 3_600_000;
const iso = (ms) => new Date(ms).toISOString();
export const sessionClass = (i) => (i * 2654435761) % 100;
const STRANDED = 24;
export const isStale = (i, n) => i % Math.max(1, Math.floor(n / STRANDED)) === 0 && i / Math.max(1, Math.floor(n / STRANDED)) < STRANDED;

/** Sessions `from` to `to` (of `n`) as `session import` lines. */
export function sessionLines(from, to, n) {
  let out = '';
  for (let i = from; i < to; i++) {
    const r = sessionClass(i);
    const line = { session_id: `s${i}`, state: { step: i, notes: 'n'.repeat(200), plan: ['a', 'b', 'c'] } };
    if (isStale(i, n)) line.updated_at = iso(NOW - 3 * 24 * HOUR);
    else if (r < 70) Object.assign(line, { status: 'closed', updated_at: iso(NOW - 30 * 24 * HOUR) });
    else if (r < 80) line.updated_at = iso(NOW - 60_000);
    else Object.assign(line, { updated_at: iso(NOW - HOUR), expires_at: iso(NOW + (2 + (r % 20)) * HOUR) });
    out += `${JSON.stringify(line)}\n`;
  }
  return out;
}

/** A mid-journal session that is active (put and get both apply), or `fallback` when there is none. */
export function midSession(n, fallback) {
  let m = Math.floor(n / 2);
  while (m < n && !(sessionClass(m) >= 70 && sessionClass(m) < 80 && !isStale(m, n))) m++;
  return m < n ? `s${m}` : fallback;
}

export const WORDS = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}${'xyzq'[i % 4]}`);
/** Half the cases start with these words: a retrieve of them matches half the bank. */
export const BOILERPLATE = 'update the database migration timeout';
export const RARE = [WORDS[800], WORDS[1200], WORDS[1700], WORDS[2100], WORDS[2400]];

/** `n` cases as `case import` lines. */
export function caseLines(n, seed0 = 42) {
  // mulberry32: 32-bit integer steps (a float LCG loses its low bits past 2^53 and repeats within ~1,000 cases).
  let seed = seed0 >>> 0;
  const rand = () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = () => WORDS[Math.floor(rand() ** 2 * WORDS.length)];
  let out = '';
  for (let i = 0; i < n; i++) {
    const prefix = rand() < 0.5 ? `${BOILERPLATE} ` : 'the ';
    const task = prefix + Array.from({ length: 3 + Math.floor(rand() * 8) }, pick).join(' ');
    const tags = Array.from({ length: Math.floor(rand() * 3) }, pick);
    out += `${JSON.stringify({ task, action: `ran ${pick()} then ${pick()}`, outcome: rand() < 0.8 ? 'worked' : 'failed', success: rand() < 0.8, reward: Math.round(rand() * 100) / 100, tags })}\n`;
  }
  return out;
}

/** The id of the first case in a data directory's case journal. */
export function firstCaseId(fs, path) {
  const fd = fs.openSync(path, 'r');
  const head = Buffer.alloc(8192);
  fs.readSync(fd, head, 0, head.length, 0);
  fs.closeSync(fd);
  return head.toString().match(/"case_id":"([^"]+)"/)[1];
}

/** Growth targets of every command, smallest size to largest (ratio at the largest / at the smallest, one run), both kinds of store. */
export const GROWTH_TARGETS = {
  'session get': 1.25,
  'session put': 1.25,
  'session put (new id)': 1.25,
  'session close': 1.25,
  'case show': 1.25,
  'case record': 1.25,
  'filtered list (--agent a)': 1.3,
  'filtered list (--stranded)': 1.3,
  'limited list (--limit 50)': 1.3,
  'limited list (--stranded --limit 5)': 1.3,
  'reap, nothing due': 1.3,
  'handoff mint': 1.3,
  'handoff accept': 1.3,
  'case list (--only-failure --limit 20)': 1.3,
  'case list (--tag --limit 20)': 1.3,
  'retrieve (rare words)': 1.3,
  'retrieve (common words)': 3,
};
