// The Claude Code hook's rows (SPEC §10.2: a hook costs about what `session put` costs): SessionStart (a new
// session; a resume whose 1 MB transcript is read for its last prompt), UserPromptSubmit, Stop, and SessionEnd
// and Stop with --record-cases over a 1 MB transcript. bench/run.mjs adds them at every size;
// `node bench/hooks.mjs` times them alone beside `node -e 0` and `session put` over BENCH_HOOK_CASES cases
// (default 10000), interleaved (BENCH_ROUNDS, default 15).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchEnv, interleave } from './interleave.mjs';

const CRUX = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'bin', 'crux');
const PROMPT = 'fix the flaky checkout test and make the payment retry idempotent';

/** A transcript of about `bytes`, shaped as Claude Code writes it: prompts (`prompt` first), tool calls, results. */
export function transcriptText(bytes, prompt = PROMPT, sessionId = 'cc-bench') {
  const common = { isSidechain: false, userType: 'external', cwd: '/src/shop', sessionId, version: '2.0.14', gitBranch: 'main' };
  const lines = [];
  let size = 0;
  let i = 0;
  const push = (line) => {
    const text = JSON.stringify({
      parentUuid: i === 0 ? null : `u-${i - 1}`,
      ...common,
      ...line,
      uuid: `u-${i}`,
      timestamp: new Date(Date.UTC(2026, 11, 1, 9) + i * 1000).toISOString(),
    });
    i += 1;
    lines.push(text);
    size += text.length + 1;
  };
  for (let turn = 0; size < bytes; turn++) {
    push({ type: 'user', message: { role: 'user', content: turn === 0 ? prompt : `${prompt}, step ${turn}` } });
    for (let k = 0; k < 6 && size < bytes; k++) {
      const id = `toolu_${turn}_${k}`;
      const tool =
        k % 3 === 0
          ? { name: 'Bash', input: { command: `npm test -- checkout --step ${turn}`, description: 'Run tests' } }
          : k % 3 === 1
            ? { name: 'Read', input: { file_path: `/src/shop/src/pay-${k}.ts` } }
            : { name: 'Edit', input: { file_path: `/src/shop/src/pay-${k}.ts`, old_string: 'a', new_string: 'b' } };
      push({
        type: 'assistant',
        message: {
          id: `msg_${turn}_${k}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5-20250929',
          content: [{ type: 'tool_use', id, ...tool }],
          stop_reason: 'tool_use',
          usage: { input_tokens: 4, output_tokens: 80 },
        },
      });
      const output = `${'  ✓ checkout retries once\n'.repeat(60)}`;
      push({
        type: 'user',
        message: { role: 'user', content: [{ tool_use_id: id, type: 'tool_result', content: output, ...(k === 3 ? { is_error: true } : {}) }] },
        toolUseResult: { stdout: output, stderr: '', interrupted: false, isImage: false },
      });
    }
    push({
      type: 'assistant',
      message: {
        id: `msg_${turn}_end`,
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5-20250929',
        content: [{ type: 'text', text: 'Done: the retry is idempotent and the test passes.' }],
        stop_reason: 'end_turn',
      },
    });
  }
  return `${lines.join('\n')}\n`;
}

const payload = (event, fields) =>
  JSON.stringify({ session_id: 'cc-1', transcript_path: '/t.jsonl', cwd: '/src/shop', permission_mode: 'default', hook_event_name: event, ...fields });

/**
 * The hook rows over `dir` (a data directory with a case bank): `crux(dir, ...args)` makes an argv, `name(label)`
 * a row name; `prompt` is what UserPromptSubmit sends and the transcript's prompts say (so a resume matches the
 * bank as the prompt does). Writes its 1 MB transcript into `work`; SessionEnd rows end a new session each time.
 */
export function hookRows({ dir, work, crux, name, prompt = PROMPT, extra = {} }) {
  const transcript = join(work, `transcript-${Date.now().toString(36)}.jsonl`);
  fs.writeFileSync(transcript, transcriptText(1 << 20, prompt));
  let next = 0;
  const fresh = () => `cc-${Date.now().toString(36)}-${next++}`;
  const hook = (...args) => crux(dir, 'hook', 'claude-code', ...args);
  const started = spawnSync('node', [...hook().slice(1)], {
    input: payload('SessionStart', { source: 'startup', transcript_path: transcript }),
    env: benchEnv({ CRUX_NOW: '2026-12-01T12:00:00Z' }),
  });
  if (started.status !== 0) throw new Error(`SessionStart exited ${started.status}: ${started.stderr}`);
  return [
    {
      name: name('hook SessionStart (new session)'),
      argv: hook(),
      cmd: 'hook SessionStart (new session)',
      ...extra,
      before(row) {
        row.input = payload('SessionStart', { session_id: fresh(), source: 'startup', transcript_path: transcript });
      },
    },
    {
      name: name('hook SessionStart (resume, 1 MB transcript)'),
      argv: hook(),
      input: payload('SessionStart', { source: 'resume', transcript_path: transcript }),
      cmd: 'hook SessionStart (resume, 1 MB transcript)',
      ...extra,
    },
    { name: name('hook UserPromptSubmit'), argv: hook(), input: payload('UserPromptSubmit', { prompt }), cmd: 'hook UserPromptSubmit', ...extra },
    { name: name('hook Stop (touch)'), argv: hook(), input: payload('Stop', { stop_hook_active: false }), cmd: 'hook Stop (touch)', ...extra },
    {
      name: name('hook Stop --record-cases (1 MB, nothing new)'),
      argv: hook('--record-cases'),
      input: payload('Stop', { stop_hook_active: false, transcript_path: transcript }),
      cmd: 'hook Stop --record-cases (1 MB, nothing new)',
      ...extra,
    },
    {
      name: name('hook SessionEnd --record-cases (1 MB transcript)'),
      argv: hook('--record-cases'),
      cmd: 'hook SessionEnd --record-cases (1 MB transcript)',
      ...extra,
      before(row) {
        row.input = payload('SessionEnd', { session_id: fresh(), reason: 'prompt_input_exit', transcript_path: transcript });
      },
    },
  ];
}

// Alone: a data directory with BENCH_HOOK_CASES cases, the hook rows beside `node -e 0` and `session put`.
if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const work = fs.mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'crux-bench-hooks-'));
  const dir = join(work, 'data');
  const env = benchEnv({ CRUX_NOW: '2026-12-01T12:00:00Z' });
  const n = Number(process.env.BENCH_HOOK_CASES ?? 10_000);
  let lines = '';
  // Tasks of four words from 2,000; one in 50 about checkout retries (the prompt's words); half of each of the project's.
  const word = (i) => `w${((i * 2654435761) >>> 0) % 2000}`;
  for (let i = 0; i < n; i++) {
    const task = i % 50 === 0 ? `make the checkout payment retry idempotent ${word(i)}` : [word(i), word(i + 1), word(i + 2), word(i + 3)].join(' ');
    lines += `${JSON.stringify({ task, action: 'ran the tests', outcome: 'worked', tags: [Math.floor(i / 50) % 2 ? 'shop' : 'other'] })}\n`;
  }
  spawnSync('node', [CRUX, '--data-dir', dir, 'case', 'import', '-'], { input: lines, env });
  spawnSync('node', [CRUX, '--data-dir', dir, 'session', 'put', 'target', '{"step":0}'], { env });
  const crux = (d, ...args) => ['node', CRUX, '--data-dir', d, ...args];
  const rows = [
    { name: 'node -e 0', argv: ['node', '-e', '0'], env },
    { name: 'session put', argv: crux(dir, 'session', 'put', 'target', '{"step":1}'), env },
    ...hookRows({ dir, work, crux, name: (label) => label, extra: { env } }),
  ];
  const results = interleave(rows, { rounds: Number(process.env.BENCH_ROUNDS ?? 15) });
  const base = results[0].median;
  const put = results[1].median;
  console.log(`${n} cases; node -e 0 median ${base.toFixed(1)} ms\n\n| command | × node -e 0 | × session put | median |\n|---|---|---|---|`);
  for (const r of results) console.log(`| ${r.name} | ${(r.median / base).toFixed(2)}× | ${(r.median / put).toFixed(2)}× | ${r.median.toFixed(1)} ms |`);
  fs.rmSync(work, { recursive: true, force: true });
}
