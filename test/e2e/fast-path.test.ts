// bin/crux runs `session get` from dist/fast-read.cjs, `session put|close` from dist/fast.cjs, `case record` from
// dist/fast-record.cjs, `session list` from dist/fast-list.cjs, `case retrieve` from dist/fast-retrieve.cjs, and
// every other line — or a line of those commands the fast path does not read as commander would — from the full
// program: either way the same bytes on stdout and stderr (piped and on a
// terminal), the same exit code and the same journals, as the full program alone gives.
import { execa } from 'execa';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, FULL as CI, snapshotDir, tempDir, testEnv } from '../helpers/cli';
import { runCli } from '../helpers/run-cli';
import { onTty } from '../helpers/tty';

const ROOT = resolve(__dirname, '../..');
const DIST = join(ROOT, 'dist');
const scripts = tempDir('crux-fast-');
/** The full program alone, as bin/crux ran every command before the fast path (without the code cache: the same bytes). */
const FULL = join(ROOT, 'dist/crux.cjs');
/**
 * The full program's answer in this process (test/helpers/run-cli.ts, held to bin/crux's bytes by e2e/run-cli): the
 * same program as FULL without a process per line. The terminal's lines below run FULL itself.
 */
async function fullProgram(data: string, args: string[], input?: string) {
  const r = await runCli(['--data-dir', data, ...args], { env: ENV, input: input ?? '' });
  return { exitCode: r.exitCode, stdout: norm(r.stdout), stderr: norm(r.stderr) };
}
/** Preloaded: records which bundles (dist/*.cjs) a process opens; not bin/crux.cjs, the main script bin/crux links to. */
const TRACE = join(scripts, 'trace.cjs');
fs.writeFileSync(
  TRACE,
  `const fs = require('node:fs'); const open = fs.openSync;
   fs.openSync = function (path, ...rest) { if (/[\\/]dist[\\/][^\\/]+\\.cjs$/.test(String(path))) fs.appendFileSync(process.env.TRACE_TO, require('node:path').basename(String(path)) + '\\n'); return open.call(this, path, ...rest); };\n`,
);

// Case ids are random: the same line gives two; the rest of the bytes must be equal.
const norm = (s: string) => s.replace(/\bc_[0-9a-z]{10,}\b/g, 'c_ID');

const ENV = { CRUX_NOW: '2026-12-01T12:00:00Z', CRUX_AGENT: 'a' };

async function run(entry: string, data: string, args: string[], input?: string) {
  const trace = join(tempDir(), 'trace');
  fs.writeFileSync(trace, '');
  const r = await execa(process.execPath, ['--require', TRACE, entry, '--data-dir', data, ...args], {
    reject: false,
    stripFinalNewline: false,
    input: input ?? '',
    env: testEnv({ ...ENV, TRACE_TO: trace }),
    extendEnv: false,
  });
  return { exitCode: r.exitCode, stdout: norm(String(r.stdout)), stderr: norm(String(r.stderr)), bundles: fs.readFileSync(trace, 'utf8').trim().split('\n') };
}

const SETUP = [
  ['session', 'put', 's1', '{"step":1}', '--ttl', '2h'],
  ['session', 'put', 's2', '{"b": [1, 2.50]}'],
  ['session', 'close', 's2', '--outcome', 'failed'],
  ['--now', '2026-11-28T12:00:00Z', 'session', 'put', 's5', '{"old":true}', '--tokens', '7'],
  ['--agent', 'b', 'session', 'put', 's6', '{}'],
  ['case', 'record', '--task', 'rotate the tls cert', '--action', 'certbot renew', '--outcome', 'renewed', '--tag', 'tls'],
  ['case', 'record', '--task', 'rotate the signing key', '--action', 'kms rotate', '--outcome', 'failed', '--failure'],
  ['case', 'record', '--task', 'deploy the web tier', '--action', 'helm upgrade', '--outcome', 'ok', '--tag', 'deploy'],
];

// Which bundles bin/crux reads for a line: a fast bundle only, or it and then the full program (nothing done
// meanwhile), or each bundle whose words the line has in turn, or the full program alone.
const GET = ['fast-read.cjs'];
const GET_FULL = ['fast-read.cjs', 'crux.cjs'];
const WRITE = ['fast.cjs'];
const WRITE_FULL = ['fast.cjs', 'crux.cjs'];
const RECORD = ['fast-record.cjs'];
const RECORD_FULL = ['fast-record.cjs', 'crux.cjs'];
const LIST = ['fast-list.cjs'];
const LIST_FULL = ['fast-list.cjs', 'crux.cjs'];
const RETRIEVE = ['fast-retrieve.cjs'];
const RETRIEVE_FULL = ['fast-retrieve.cjs', 'crux.cjs'];
const OTHER = ['crux.cjs'];

// [args, stdin, the bundles bin/crux reads for it, in order]
const LINES: [string[], string | undefined, readonly string[]][] = [
  [['session', 'get', 's1'], undefined, GET],
  [['session', 'get', 's1', '--json'], undefined, GET],
  [['--json', 'session', 'get', 's2'], undefined, GET],
  [['session', 'get', 'nope'], undefined, GET],
  [['session', 'get', 'nope', '--json'], undefined, GET],
  // A read of history: the get's bundle hands it on (journal/dir/quick-read.ts), untouched, to the full program.
  [['session', 'get', 's1', '--at', '1'], undefined, GET_FULL],
  [['session', 'get', 's1', '--at', 'yesterday'], undefined, GET],
  [['session', 'get', 'bad id!'], undefined, GET],
  [['session', 'put', 's1', '{"step":2}', '--add-tokens', '5'], undefined, WRITE],
  [['session', 'put', 's3', '--ttl', '90s'], '{"from":"stdin"}', WRITE],
  [['session', 'put', 's3', '-', '--json'], '{"from":"stdin"}', WRITE],
  [['session', 'put', 's1', '{not json'], undefined, WRITE],
  [['session', 'put', 's1', '{}', '--ttl', '2h', '--expires-at', '2026-12-02T00:00:00Z'], undefined, WRITE],
  [['session', 'put', 's1', '{}', '--tokens', 'many'], undefined, WRITE],
  [['session', 'put', 's2', '{}'], undefined, WRITE],
  [['-q', 'session', 'put', 's4', '{}'], undefined, WRITE],
  [['session', 'close', 's1', '--summary', 'done https://u:secret@h/x'], undefined, WRITE],
  [['session', 'close', 's1'], undefined, WRITE],
  [['session', 'close', 's2', '--outcome', 'expired'], undefined, WRITE],
  [['session', 'close', 'nope', '--json'], undefined, WRITE],
  [['case', 'record', '--task', 'rotate the cert', '--action', 'renew', '--outcome', 'ok', '--tag', 'tls', '--tag', 'ops'], undefined, RECORD],
  [['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o', '--reward', 'lots'], undefined, RECORD],
  [['case', 'record', '--task', 't'], undefined, RECORD],
  [['case', 'record', '--stdin', '--json'], '{"task":"t","action":"a","outcome":"o"}', RECORD],
  [['case', 'record', '--stdin', '--task', 't'], '{}', RECORD],
  // Lines the fast path leaves to commander: help, usage errors, other commands.
  [['session', 'get'], undefined, GET_FULL],
  [['session', 'get', 's1', 'extra'], undefined, GET_FULL],
  [['session', 'get', 's1', '--bogus'], undefined, GET_FULL],
  [['session', 'get', '--help'], undefined, GET_FULL],
  [['help', 'session', 'put'], undefined, WRITE_FULL],
  [['session', 'put', 's1', '--ttl'], undefined, WRITE_FULL],
  [['session', 'close', 's1', '--summary', '-q'], undefined, WRITE_FULL],
  [['session', 'close', 's1', '--summary', '-x'], undefined, WRITE],
  [['--color', 'bogus', 'session', 'get', 's1'], undefined, GET_FULL],
  [['case', 'record', 'extra'], undefined, RECORD_FULL],
  // The queries, from dist/fast-list.cjs and dist/fast-retrieve.cjs: tables, --json, --quiet, each option, refused values.
  [['session', 'list'], undefined, LIST],
  [['session', 'ls', '--json'], undefined, LIST],
  [['session', 'list', '--stranded', '--limit', '24', '--json'], undefined, LIST],
  [['session', 'list', '--stranded', '--stale-after', '1h', '--fresh-for', '1m'], undefined, LIST],
  [['session', 'list', '--all', '--quiet'], undefined, LIST],
  [['-q', 'session', 'list', '--archived'], undefined, LIST],
  [['session', 'list', '--all', '--sort', '-tokens', '--no-headers', '--limit', '2'], undefined, LIST],
  [['session', 'list', '--status', 'closed,active', '--status=active', '--json'], undefined, LIST],
  [['--agent', 'a', 'session', 'list', '--all-agents'], undefined, LIST],
  [['--agent', 'a', 'session', 'list'], undefined, LIST],
  [['session', 'list', '--status', 'bogus'], undefined, LIST],
  [['session', 'list', '--limit', '-5'], undefined, LIST],
  [['session', 'list', '--sort', 'nope', '--json'], undefined, LIST],
  [['session', 'list', '--stale-after', 'soon'], undefined, LIST],
  [['case', 'retrieve', 'rotate', 'the', 'cert'], undefined, RETRIEVE],
  [['case', 'retrieve', 'rotate', '--json', 'tls'], undefined, RETRIEVE],
  [['case', 'retrieve', 'rotate', '--only-success', '--min-similarity', '0.1', '--top-k', '2', '--no-headers'], undefined, RETRIEVE],
  [['case', 'retrieve', 'rotate', 'key', '--mark-reused', '--json'], undefined, RETRIEVE],
  [['-q', 'case', 'retrieve', 'deploy', '--limit', '1'], undefined, RETRIEVE],
  [['case', 'retrieve', 'nothing', 'matches', 'this'], undefined, RETRIEVE],
  [['case', 'retrieve', 'rotate', '--top-k', '500'], undefined, RETRIEVE],
  [['case', 'retrieve', 'rotate', '--min-similarity', '2', '--json'], undefined, RETRIEVE],
  // Lines of the queries that commander answers: usage errors, help.
  [['session', 'list', 'extra'], undefined, LIST_FULL],
  [['session', 'list', '--bogus'], undefined, LIST_FULL],
  [['session', 'list', '--limit'], undefined, LIST_FULL],
  [['session', 'list', '--sort', '--json'], undefined, LIST_FULL],
  [['session', 'list', '--help'], undefined, LIST_FULL],
  [['case', 'retrieve'], undefined, RETRIEVE_FULL],
  [['case', 'retrieve', 'x', '--bogus', '--json'], undefined, RETRIEVE_FULL],
  [['case', 'retrieve', 'x', '--limit', '-q'], undefined, RETRIEVE_FULL],
  [['help', 'case', 'retrieve'], undefined, RETRIEVE_FULL],
  [['case', 'list', '--json'], undefined, OTHER],
  // The words of two fast bundles: the first does not read these as its own, and hands them on.
  [['session', 'list', '--agent', 'get', '--json'], undefined, ['fast-read.cjs', 'fast-list.cjs']],
  [['session', 'ls', '--sort', 'put', '--json'], undefined, ['fast.cjs', 'fast-list.cjs']],
  [['case', 'retrieve', 'session', 'get', '--json'], undefined, ['fast-read.cjs', 'fast-retrieve.cjs']],
  [['case', 'retrieve', 'record', 'case'], undefined, ['fast-record.cjs', 'fast-retrieve.cjs']],
  [['case', 'retrieve', 'session', 'list'], undefined, ['fast-list.cjs', 'fast-retrieve.cjs']],
  [['case', 'record', '--task', 'session put failed', '--action', 'a', '--outcome', 'o'], undefined, RECORD],
  [['case', 'record', '--task', 'put', '--action', 'session', '--outcome', 'o'], undefined, ['fast.cjs', 'fast-record.cjs']],
  [['session', 'list', 'get'], undefined, ['fast-read.cjs', 'fast-list.cjs', 'crux.cjs']],
  // A get of a session named like a query, a put of one named like a get: each bundle's own.
  [['session', 'get', 'list'], undefined, GET],
  [['session', 'put', 'ls', '{"n":1}'], undefined, WRITE],
  [['session', 'put', 'get', '{"n":1}'], undefined, ['fast-read.cjs', 'fast.cjs']],
  [['session', 'close', 'get'], undefined, ['fast-read.cjs', 'fast.cjs']],
  [['session', 'get', 'put'], undefined, GET],
];

/** The data directory after SETUP (made once by the full program), copied: one for bin/crux, one for the full program. */
let template: string | undefined;
/** Copies made ahead, a batch at a time: one shell for many `cp -a`, not a process of the test's a copy. */
const ready: string[] = [];
async function twoStores() {
  if (template === undefined) {
    template = join(tempDir(), 'data');
    for (const args of SETUP) expect((await run(FULL, template, args)).exitCode).toBe(0);
  }
  if (ready.length < 2) {
    const batch = Array.from({ length: 32 }, () => join(tempDir(), 'data'));
    // `cp -a`, which keeps the journal's mtime to the nanosecond: a derived file is bound to it, and a copy with a new
    // one is a store whose index a reader (the full program) writes again.
    execFileSync('sh', ['-c', 'src=$1; shift; for d; do cp -a "$src" "$d" || exit 1; done', 'sh', template, ...batch]);
    ready.push(...batch);
  }
  return [ready.shift()!, ready.shift()!] as const;
}

/**
 * The lines npm test runs: the first three of each way through the bundles (the list above puts the plain lines of
 * a kind first, then its options and refused values), every line in CI's run (CRUX_TEST_FULL) and test:stress.
 */
function linesOfThisRun(): typeof LINES {
  if (CI) return LINES;
  const taken = new Map<string, number>();
  return LINES.filter(([, , bundles]) => {
    const way = bundles.join(' ');
    taken.set(way, (taken.get(way) ?? 0) + 1);
    return taken.get(way)! <= 3;
  });
}

describe('the fast path', () => {
  it(`answers as the full program does, byte for byte, exit code and journal too (${CI ? 'every line' : 'three lines a way through the bundles; every line in CI'})`, async () => {
    const lines = linesOfThisRun();
    expect(lines.length).toBe(CI ? LINES.length : 38);
    for (const [args, input, bundle] of lines) {
      const [a, b] = await twoStores();
      const viaBin = await run(CRUX, a, args, input);
      const full = await fullProgram(b, args, input);
      const line = args.join(' ');
      expect({ exitCode: viaBin.exitCode, stdout: viaBin.stdout, stderr: viaBin.stderr }, line).toEqual({
        exitCode: full.exitCode,
        stdout: full.stdout,
        stderr: full.stderr,
      });
      // The same files (a derived file's name carries a random nonce), the same journal.
      const files = (dir: string) =>
        Object.keys(snapshotDir(dir))
          .map((f) => f.replace(/[0-9a-f]{8,}/g, 'N'))
          .sort();
      expect(files(a), line).toEqual(files(b));
      // A new case's id is random; the rest of the journals is the same.
      for (const journal of args.includes('record') ? [] : ['sessions.jsonl', 'cases.jsonl']) {
        expect(fs.readFileSync(join(a, journal), 'utf8'), `${line}: ${journal}`).toBe(fs.readFileSync(join(b, journal), 'utf8'));
      }
      expect(viaBin.bundles, line).toEqual(bundle);
    }
  });

  it('hands a get or a list it cannot answer quickly on, untouched, to the full program: the same bytes, warnings and files', async () => {
    /** Flips one byte `from` the end of `file` (a negative offset) or the start. */
    const flip = (file: string, at: number) => {
      const bytes = fs.readFileSync(file);
      const i = at < 0 ? bytes.length + at : at;
      bytes[i] = bytes[i]! ^ 0x20;
      fs.writeFileSync(file, bytes);
    };
    const cacheFiles = (dir: string, prefix: string) => fs.readdirSync(join(dir, 'cache')).filter((f) => f.startsWith(prefix));
    // The lines, and which of them each damage leaves to the quick reader (the rest it hands on): a get, a get of no
    // such session (the index's "under another agent" read), a whole list (a replay over an index that covers the
    // journal), a limited one (the index's newest-first read).
    const lines = {
      get: ['session', 'get', 's1'],
      json: ['session', 'get', 's1', '--json'],
      nope: ['session', 'get', 'nope'],
      list: ['session', 'list', '--all-agents'],
      newest: ['session', 'list', '--all-agents', '--limit', '2', '--json'],
    };
    type Line = keyof typeof lines;
    const everyDamage: [string, (dir: string) => void, readonly Line[]][] = [
      ['cache/ lost', (d) => fs.rmSync(join(d, 'cache'), { recursive: true }), []],
      [
        'a page of the index base flipped',
        (d) => {
          for (const f of cacheFiles(d, 'sessions.jsonl.idx.'))
            for (let at = 64; at < fs.statSync(join(d, 'cache', f)).size; at += 4096) flip(join(d, 'cache', f), at);
        },
        // A replay needs no page of the index, only that it covers the journal.
        ['list'],
      ],
      ['the index manifest flipped', (d) => flip(join(d, 'cache/sessions.jsonl.idx'), 40), []],
      // The log's blocks (after the manifest's, in the index file) run on one checksum: a block that does not verify
      // ends the log, and the journal past it is
      // read; the index no longer covers the journal, which a replaying reader writes again. A get reads its own
      // lines past it; a query (no such session: who has it; a limited list) trusts the prefix unread, which only
      // the full program may do (a writer writing the rest: DataDir's trustedRead).
      ['the last index log block flipped', (d) => flip(join(d, 'cache/sessions.jsonl.idx'), -8), ['get', 'json']],
      [
        'the line of s1 changed',
        (d) => {
          const path = join(d, 'sessions.jsonl');
          fs.writeFileSync(path, fs.readFileSync(path, 'utf8').replace('{\\"step\\":1}', '{\\"step\\":7}'));
        },
        [],
      ],
      // A limited list reports a torn tail as every read does (SPEC §3): the full program tells it.
      ['a torn tail', (d) => fs.appendFileSync(join(d, 'sessions.jsonl'), '{"v":1,"seq":99,"ts":"2026-12-01T'), []],
      [
        'the cache a FIFO',
        (d) => {
          fs.rmSync(join(d, 'cache/sessions.jsonl.idx'));
          execFileSync('mkfifo', [join(d, 'cache/sessions.jsonl.idx')]);
        },
        [],
      ],
    ];
    // In npm test, three damages: the cache gone, a block of the log that does not verify (the lines the fast path
    // still answers), and the journal's own tail torn; every damage in CI's run (CRUX_TEST_FULL) and test:stress.
    const damages = CI ? everyDamage : everyDamage.filter(([what]) => ['cache/ lost', 'the last index log block flipped', 'a torn tail'].includes(what));
    expect(damages).toHaveLength(CI ? 7 : 3);
    for (const [what, damage, quick] of damages) {
      for (const [name, args] of Object.entries(lines) as [Line, string[]][]) {
        const own = name === 'list' || name === 'newest' ? 'fast-list.cjs' : 'fast-read.cjs';
        const bundles = quick.includes(name) ? [own] : [own, 'crux.cjs'];
        const [a, b] = await twoStores();
        damage(a);
        damage(b);
        const line = `${what}: ${args.join(' ')}`;
        const viaBin = await run(CRUX, a, args);
        const full = await fullProgram(b, args);
        // A warning names its journal's path: each copy's own.
        expect({ exitCode: viaBin.exitCode, stdout: viaBin.stdout, stderr: viaBin.stderr.replaceAll(a, 'DIR') }, line).toEqual({
          exitCode: full.exitCode,
          stdout: full.stdout,
          stderr: full.stderr.replaceAll(b, 'DIR'),
        });
        const files = (dir: string) =>
          Object.entries(snapshotDir(dir))
            .map(([f, sum]) => `${f.replace(/[0-9a-f]{8,}/g, 'N')}${f.startsWith('cache/') ? '' : ` ${sum}`}`)
            .sort();
        // An index found behind its journal is rebuilt by the full program (a full verifying scan: DataDir's
        // trustedRead); a get answered quickly reads and verifies its own lines and leaves cache/ as it was, for the
        // next full command to rebuild. Everything outside cache/ is the same either way.
        const rebuilt = what === 'the last index log block flipped' && quick.includes(name);
        const kept = (dir: string) => files(dir).filter((f) => !(rebuilt && f.startsWith('cache/')));
        expect(kept(a), line).toEqual(kept(b));
        expect(viaBin.bundles, line).toEqual(bundles);
      }
    }
    // A store not made yet: no session, from the get's own bundle.
    const fresh = [join(tempDir(), 'data'), join(tempDir(), 'data')] as const;
    const viaBin = await run(CRUX, fresh[0], ['session', 'get', 's1']);
    const full = await fullProgram(fresh[1], ['session', 'get', 's1']);
    expect({ exitCode: viaBin.exitCode, stderr: viaBin.stderr, bundles: viaBin.bundles }).toEqual({
      exitCode: full.exitCode,
      stderr: full.stderr,
      bundles: GET,
    });
    expect(fs.existsSync(fresh[0])).toBe(false);
  });

  it('answers the queries on a terminal as the full program does, from their own bundles', async () => {
    const trace = join(tempDir(), 'trace');
    const lines = [
      ['session', 'list'],
      ['session', 'list', '--all', '--color', 'always'],
      ['case', 'retrieve', 'rotate', 'the', 'cert'],
      ['case', 'retrieve', 'rotate', '--only-success', '--no-color'],
      ['session', 'list', '--status', 'bogus'],
    ];
    for (const args of lines) {
      const [a, b] = await twoStores();
      fs.writeFileSync(trace, '');
      const env = { ...ENV, NODE_OPTIONS: `--require ${TRACE}`, TRACE_TO: trace };
      const viaBin = await onTty(a, args, 100, env);
      const read = fs.readFileSync(trace, 'utf8').trim().split('\n');
      const full = await onTty(b, args, 100, ENV, [process.execPath, FULL]);
      expect(viaBin, args.join(' ')).toEqual(full);
      expect(viaBin.screen, args.join(' ')).not.toBe('');
      expect(
        read.filter((f) => f !== 'loader.cjs'),
        args.join(' '),
      ).toEqual([args[0] === 'case' ? 'fast-retrieve.cjs' : 'fast-list.cjs']);
    }
  });
});

describe('the fast bundles without the PostgreSQL engine', () => {
  // bin/crux sends a line that may name a PostgreSQL store to the twins with the engine (fast-pg.cjs,
  // fast-list-pg.cjs, …: test/reliability/start-up-files.test.ts); a bundle without it, given such a line all the
  // same, takes nothing: it reports the line as not handled, and bin/crux would run the full program on it.
  const handledBy = async (bundle: string, args: string[], env: Record<string, string> = {}) => {
    // `handled`: false at once for a line the bundle leaves; for one it takes, true or its command's promise.
    const script = `process.argv = [process.argv[0], 'crux', ...JSON.parse(process.env.ARGS)]; process.stdout.write(require(${JSON.stringify(join(DIST, bundle))}).handled === false ? 'false' : 'taken')`;
    const run = await execa(process.execPath, ['-e', script], { env: testEnv({ ARGS: JSON.stringify(args), ...env }), reject: false });
    return { exitCode: run.exitCode, stdout: run.stdout, stderr: run.stderr };
  };
  const nowhere = 'postgres://crux@127.0.0.1:1/none?connect_timeout=2';

  it('hands a PostgreSQL line on, from --store or CRUX_STORE, untouched', async () => {
    for (const bundle of ['fast.cjs', 'fast-list.cjs']) {
      const line = bundle === 'fast.cjs' ? ['session', 'put', 's', '{}'] : ['--json', 'session', 'list'];
      expect(await handledBy(bundle, ['--store', nowhere, ...line]), bundle).toEqual({ exitCode: 0, stdout: 'false', stderr: '' });
      expect(await handledBy(bundle, line, { CRUX_STORE: nowhere }), bundle).toEqual({ exitCode: 0, stdout: 'false', stderr: '' });
      // A store named wrongly is not decided there either: the full program reports it.
      expect(await handledBy(bundle, ['--store', 'not-a-url', ...line]), bundle).toEqual({ exitCode: 0, stdout: 'false', stderr: '' });
    }
  });

  it('takes a data directory’s line, even with CRUX_STORE set beside --data-dir', async () => {
    const dir = tempDir();
    const got = await handledBy('fast.cjs', ['--data-dir', dir, 'session', 'put', 's', '{}'], { CRUX_STORE: nowhere });
    // Taken at once; the put's answer follows.
    expect(got).toEqual({ exitCode: 0, stdout: 'takenstored session s: active, 0 tokens', stderr: '' });
    expect(fs.readFileSync(join(dir, 'sessions.jsonl'), 'utf8')).toContain('"s"');
  });
});
