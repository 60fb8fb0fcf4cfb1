// Bad input, table-driven, over every command: each exits with its documented code (never 0, never 1), prints
// one line and no stack trace on stderr, and leaves the data directory byte-identical.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { crux, FULL, freshDataDir, snapshotDir, tempDir } from '../helpers/cli';
import { crux as inProcess } from '../helpers/run-cli';
import { walkHelp } from '../helpers/help';
import { pool, TIMEOUT } from './harness';

interface Row {
  args: string[];
  code: number;
  input?: string | Buffer;
  env?: Record<string, string>;
  why: string;
}

const junk = (n: number, seed: number) => {
  // Random bytes that are not valid JSON, with a newline and a terminal escape early on: an error message
  // that echoes its input must not break the one-line rule or reach the terminal raw.
  const bytes = randomBytes(n);
  bytes[0] = 0xff - (seed % 8);
  Buffer.from('\n\u001b[31m').copy(bytes, 3);
  return bytes;
};

/** Whether bin/crux offers the line to one of its fast bundles before the full program (src/cli/launch.ts). */
function fastLine(args: string[]): boolean {
  const session = args.includes('session');
  const kase = args.includes('case');
  return (
    (session && ['get', 'put', 'close', 'list', 'ls'].some((word) => args.includes(word))) ||
    (kase && ['record', 'retrieve'].some((word) => args.includes(word)))
  );
}

/**
 * Which rows run as processes: in CI's run (FULL) every one; in npm test the lines a fast bundle is offered, and
 * every fourth of the rest (the full program's process: its exit and its one line); the others run the full program
 * in this process (run-cli.ts, what bin/crux runs after its launcher), the same answer without a Node start.
 */
const asProcess = (row: Row, index: number): boolean => FULL || fastLine(row.args) || index % 4 === 0;

let dir: string;
let files: { missing: string; directory: string; notJson: string; notPackage: string; badTask: string; jsonArray: string };

function rows(): Row[] {
  const { missing, directory, notJson, notPackage, badTask } = files;
  return [
    // global
    { args: ['frobnicate'], code: 2, why: 'unknown command' },
    { args: ['session', 'get', 'a', '--bogus'], code: 2, why: 'unknown option' },
    { args: ['--data-dir', '', 'session', 'get', 'a'], code: 5, why: 'empty --data-dir' },
    { args: ['--now', 'yesterday', 'session', 'put', 'a', '{}'], code: 5, why: 'bad --now' },
    { args: ['session', 'put', 'a', '{}'], env: { CRUX_NOW: '2026-02-30T00:00:00Z' }, code: 5, why: 'bad CRUX_NOW (no such day)' },
    { args: ['session', 'put', 'a', '{}'], env: { CRUX_LOCK_TIMEOUT: 'soon' }, code: 5, why: 'bad CRUX_LOCK_TIMEOUT' },
    { args: ['--agent', 'a::b', 'session', 'put', 'a', '{}'], code: 5, why: 'agent name with ::' },
    { args: ['--agent', 'x\u0007', 'session', 'get', 'a'], code: 5, why: 'agent name with a control character' },
    // store init, mcp install/uninstall, hook uninstall, ui
    { args: ['store', 'init', '--bogus'], code: 2, why: 'store init: unknown option' },
    { args: ['mcp', 'install', 'nope'], code: 2, why: 'mcp install: unknown client' },
    { args: ['mcp', 'uninstall', 'nope'], code: 2, why: 'mcp uninstall: unknown client' },
    { args: ['hook', 'uninstall', 'nope'], code: 2, why: 'hook uninstall: unknown client' },
    { args: ['ui', '--port', '70000'], code: 5, why: 'ui: a port out of range' },
    { args: ['ui', '--port', 'abc'], code: 5, why: 'ui: a port that is not a number' },
    // session put
    { args: ['session', 'put', 'a', '{'], code: 5, why: 'malformed JSON' },
    { args: ['session', 'put', 'a', '{"a":1}}'], code: 5, why: 'trailing garbage after JSON' },
    { args: ['session', 'put', 'a'], input: '', code: 5, why: 'empty stdin' },
    { args: ['session', 'put', 'a'], input: junk(512, 1), code: 5, why: 'random bytes on stdin' },
    { args: ['session', 'put', 'a', '{}', '--ttl', '5x'], code: 5, why: 'bad duration' },
    { args: ['session', 'put', 'a', '{}', '--ttl', '0'], code: 5, why: 'duration without a unit' },
    { args: ['session', 'put', 'a', '{}', '--ttl', '1.5h'], code: 5, why: 'fractional duration' },
    { args: ['session', 'put', 'a', '{}', '--ttl', '99999999999999999999d'], code: 5, why: 'duration out of range' },
    { args: ['session', 'put', 'a', '{}', '--expires-at', 'tomorrow'], code: 5, why: 'bad time' },
    { args: ['session', 'put', 'a', '{}', '--expires-at', '2026-13-01T00:00:00Z'], code: 5, why: 'month 13' },
    { args: ['session', 'put', 'a', '{}', '--tokens', 'abc'], code: 5, why: 'non-numeric count' },
    { args: ['session', 'put', 'a', '{}', '--tokens', '1.5'], code: 5, why: 'fractional count' },
    { args: ['session', 'put', 'a', '{}', '--tokens', '1e400'], code: 5, why: 'count out of range' },
    { args: ['session', 'put', 'a', '{}', '--tokens=-1'], code: 5, why: 'negative count' },
    { args: ['session', 'put', 'a', '{}', '--add-tokens', 'NaN'], code: 5, why: 'NaN' },
    { args: ['session', 'put', 'a', '{}', '--tokens', '10', '--max-tokens', '5'], code: 5, why: 'over the token ceiling' },
    {
      args: ['session', 'put', 'a', '{"big":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}'],
      env: { CRUX_MAX_STATE_BYTES: '16' },
      code: 5,
      why: 'over the state size limit',
    },
    { args: ['session', 'put', 'a', '{}'], env: { CRUX_MAX_STATE_BYTES: 'lots' }, code: 5, why: 'bad CRUX_MAX_STATE_BYTES' },
    { args: ['session', 'put', 'a', '--file', missing], code: 5, why: 'state file does not exist' },
    { args: ['session', 'put', 'a', '--file', directory], code: 5, why: 'state file is a directory' },
    { args: ['session', 'put', 'a', '--file', notJson], code: 5, why: 'state file is not JSON' },
    { args: ['session', 'put', 'a', '{}', '--file', notJson], code: 2, why: 'state given twice' },
    { args: ['session', 'put', 'a', '{}', '--ttl', '1h', '--expires-at', '2030-01-01T00:00:00Z'], code: 2, why: '--ttl and --expires-at' },
    { args: ['session', 'put', 'a::b', '{}'], code: 5, why: 'id with ::' },
    { args: ['session', 'put', '', '{}'], code: 5, why: 'empty id' },
    { args: ['session', 'put', 'a\nb', '{}'], code: 5, why: 'id with a newline' },
    { args: ['session', 'put', 'x'.repeat(300), '{}'], code: 5, why: 'id over 256 characters' },
    { args: ['session', 'put', 'closed', '{}'], code: 4, why: 'put on a closed session' },
    { args: ['session', 'put'], code: 2, why: 'missing id' },
    // session get / list / archive / unarchive / delete / close / reap / machine / export / import
    { args: ['session', 'get', 'nope'], code: 3, why: 'no such session' },
    { args: ['session', 'get', ''], code: 5, why: 'empty id' },
    { args: ['session', 'get'], code: 2, why: 'missing id' },
    { args: ['session', 'get', 'closed', '--at', 'soon'], code: 5, why: '--at neither seq nor time' },
    { args: ['session', 'get', 'closed', '--at', '0'], code: 5, why: '--at seq 0' },
    { args: ['session', 'get', 'nope', '--at', '1'], code: 3, why: 'no such session then' },
    { args: ['session', 'history', 'nope'], code: 3, why: 'no history of the session' },
    { args: ['session', 'history', 'closed', '--limit', 'x'], code: 5, why: 'bad --limit' },
    { args: ['session', 'history'], code: 2, why: 'history: missing id' },
    { args: ['session', 'list', '--fresh-for', 'soon'], code: 5, why: 'bad duration' },
    { args: ['session', 'list', '--stale-after', '-1h'], code: 5, why: 'negative duration' },
    { args: ['session', 'archive', 'nope'], code: 3, why: 'no such session' },
    { args: ['session', 'archive', 'closed'], code: 4, why: 'archive a closed session' },
    { args: ['session', 'unarchive', 'a'], code: 4, why: 'unarchive an active session' },
    { args: ['session', 'delete', 'a'], code: 2, why: 'delete without --yes' },
    { args: ['session', 'delete', 'nope', '--yes'], code: 3, why: 'no such session' },
    { args: ['session', 'close', 'a', '--outcome', 'exploded'], code: 5, why: 'unknown outcome' },
    { args: ['session', 'close', 'nope'], code: 3, why: 'no such session' },
    { args: ['session', 'reap', '--now'], code: 2, why: 'option without its value' },
    { args: ['session', 'machine', 'extra'], code: 2, why: 'unexpected argument' },
    { args: ['session', 'export', '--bogus'], code: 2, why: 'unknown option' },
    { args: ['session', 'import'], input: junk(300, 2), code: 5, why: 'random bytes' },
    { args: ['session', 'import'], input: '{"session_id":"n1","state":{}}\n{"session_id":"n2"}\n', code: 5, why: 'line without state' },
    { args: ['session', 'import'], input: '{"session_id":"a::b","state":{}}\n', code: 5, why: 'bad id in a line' },
    { args: ['session', 'import', missing], code: 5, why: 'file does not exist' },
    { args: ['session', 'import', directory], code: 5, why: 'a directory' },
    // case
    { args: ['case', 'record', '--action', 'a', '--outcome', 'o'], code: 2, why: 'missing --task' },
    { args: ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o', '--reward', 'high'], code: 5, why: 'bad reward' },
    { args: ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o', '--reward', 'NaN'], code: 5, why: 'NaN reward' },
    { args: ['case', 'record', '--task', '', '--action', 'a', '--outcome', 'o'], code: 5, why: 'empty task' },
    { args: ['case', 'record', '--stdin'], input: junk(200, 3), code: 5, why: 'random bytes' },
    { args: ['case', 'record', '--stdin'], input: '{"task":1,"action":"a","outcome":"o"}', code: 5, why: 'task not a string' },
    { args: ['case', 'record', '--stdin'], input: '[]', code: 5, why: 'not an object' },
    { args: ['case', 'retrieve', 'deploy', '--top-k=-3'], code: 5, why: 'negative top-k' },
    { args: ['case', 'retrieve', 'deploy', '--top-k', '1.5'], code: 5, why: 'fractional top-k' },
    { args: ['case', 'retrieve', 'deploy', '--top-k', 'many'], code: 5, why: 'bad top-k' },
    { args: ['case', 'retrieve', 'deploy', '--min-similarity', '2'], code: 5, why: 'similarity over 1' },
    { args: ['case', 'retrieve', 'deploy', '--min-similarity', 'x'], code: 5, why: 'bad similarity' },
    { args: ['case', 'retrieve'], code: 2, why: 'missing query' },
    { args: ['case', 'show', 'c_000000000000000000000000'], code: 3, why: 'no such case' },
    { args: ['case', 'show', 'not an id'], code: 3, why: 'malformed case id (no such case)' },
    { args: ['case', 'delete', 'c_000000000000000000000000'], code: 2, why: 'delete without --yes' },
    { args: ['case', 'delete', 'c_000000000000000000000000', '--yes'], code: 3, why: 'no such case' },
    { args: ['case', 'import'], input: junk(300, 4), code: 5, why: 'random bytes' },
    { args: ['case', 'import'], input: '{"task":"t","action":"a"}\n', code: 5, why: 'line without outcome' },
    { args: ['case', 'import', missing], code: 5, why: 'file does not exist' },
    { args: ['case', 'list', 'extra'], code: 2, why: 'unexpected argument' },
    { args: ['case', 'export', '--bogus'], code: 2, why: 'unknown option' },
    // handoff
    { args: ['handoff', 'mint', 'nope', '--from', 'alice'], code: 3, why: 'no such session' },
    { args: ['handoff', 'mint', 'a', '--from', 'alice', '--ttl', 'forever'], code: 5, why: 'bad ttl' },
    { args: ['handoff', 'mint', 'a', '--from', 'alice', '--task-file', missing], code: 5, why: 'task file does not exist' },
    { args: ['handoff', 'mint', 'a', '--from', 'alice', '--task-file', notJson], code: 5, why: 'task file is not JSON' },
    { args: ['handoff', 'mint', 'a', '--from', 'alice', '--task-file', badTask], code: 5, why: 'task file of the wrong shape' },
    { args: ['handoff', 'mint', 'a', '--from', 'alice', '--alg', 'rot13'], code: 2, why: 'unknown algorithm (not one of the choices)' },
    { args: ['handoff', 'mint', 'a', '--from', 'a::b'], code: 5, why: 'bad agent name' },
    { args: ['handoff', 'accept', missing, '--as', 'bob'], code: 5, why: 'package file does not exist' },
    { args: ['handoff', 'accept', directory, '--as', 'bob'], code: 5, why: 'package is a directory' },
    { args: ['handoff', 'accept', notJson, '--as', 'bob'], code: 5, why: 'package is not JSON' },
    { args: ['handoff', 'accept', notPackage, '--as', 'bob'], code: 5, why: 'JSON but not a package' },
    { args: ['handoff', 'accept', '-', '--as', 'bob'], input: junk(400, 5), code: 5, why: 'random bytes on stdin' },
    { args: ['handoff', 'accept', notPackage, '--as', 'bob', '--max-age', 'old'], code: 5, why: 'bad max-age' },
    { args: ['handoff', 'inspect', missing], code: 5, why: 'package file does not exist' },
    { args: ['handoff', 'inspect', '-'], input: junk(400, 6), code: 5, why: 'random bytes on stdin' },
    { args: ['handoff', 'inspect', notPackage], code: 5, why: 'JSON but not a package' },
    { args: ['handoff', 'export', 'h_nope'], code: 3, why: 'no such handoff' },
    { args: ['handoff', 'trust', 'not-a-key', '--agent', 'bob'], code: 5, why: 'not a public key' },
    { args: ['handoff', 'untrust', '--agent', 'nobody'], code: 3, why: 'untrust: no key of the agent' },
    { args: ['handoff', 'untrust', 'not-a-key', '--agent', 'bob'], code: 5, why: 'untrust: not a public key or fingerprint' },
    { args: ['handoff', 'untrust'], code: 2, why: 'untrust: no agent' },
    { args: ['handoff', 'list', 'extra'], code: 2, why: 'unexpected argument' },
    { args: ['handoff', 'keygen', '--agent', 'a::b'], code: 5, why: 'bad agent name' },
    // journal, doctor, completion
    { args: ['journal', 'check', '--bogus'], code: 2, why: 'unknown option' },
    { args: ['journal', 'compact', 'extra'], code: 2, why: 'unexpected argument' },
    { args: ['journal', 'frobnicate'], code: 2, why: 'unknown subcommand' },
    { args: ['journal', 'copy'], code: 2, why: 'journal copy without --to' },
    { args: ['journal', 'copy', '--to', ''], code: 5, why: 'empty --to' },
    { args: ['journal', 'copy', '--to', dir], code: 2, why: 'journal copy onto itself' },
    { args: ['journal', 'redact', '--bogus'], code: 2, why: 'unknown option' },
    { args: ['journal', 'redact', 'extra'], code: 2, why: 'unexpected argument' },
    { args: ['journal', 'encrypt'], code: 5, why: 'journal encrypt without a key' },
    { args: ['journal', 'rekey'], code: 2, why: 'journal rekey without --new-key-file' },
    { args: ['journal', 'decrypt'], code: 5, why: 'journal decrypt without a key' },
    { args: ['key', 'new', 'extra'], code: 2, why: 'unexpected argument' },
    { args: ['key', 'new', '--out', directory], code: 5, why: 'key new --out onto a directory (never overwritten)' },
    { args: ['--store', 'postgres://crux:pw@db.invalid/x', 'session', 'list'], code: 2, why: '--store and --data-dir together' },
    { args: ['doctor', '--bogus'], code: 2, why: 'unknown option' },
    { args: ['completion', 'fish'], code: 2, why: 'unsupported shell (not one of the choices)' },
    { args: ['completion'], code: 2, why: 'missing shell' },
    { args: ['session', 'history', 'a::b'], code: 5, why: 'session id with ::' },
    { args: ['handoff', 'untrust', '--agent', 'a::b'], code: 5, why: 'bad agent name' },
    // mcp, hook (a hook never exits 2: its usage errors are 5)
    { args: ['mcp', '--agent', 'a::b'], code: 5, why: 'bad agent name, refused before serving' },
    { args: ['mcp', 'extra'], code: 2, why: 'unexpected argument' },
    { args: ['hook', 'claude-code'], input: junk(512, 7), code: 5, why: 'random bytes as the payload' },
    { args: ['hook', 'claude-code'], input: '{"hook_event_name":"Stop","session_id":"a::b"}', code: 5, why: 'bad session id in the payload' },
    { args: ['hook', 'claude-code', '--bogus'], input: '{}', code: 5, why: 'unknown option of a hook (never 2)' },
    { args: ['hook', 'gemini-cli'], input: '[1]', code: 5, why: 'payload not an object' },
    { args: ['hook', 'gemini-cli', '--top-k', 'x'], input: '{}', code: 5, why: 'bad --top-k of a hook' },
    { args: ['hook', 'install', 'nope'], code: 2, why: 'unknown client' },
    { args: ['hook', 'install', 'claude-code', '--settings', files.notJson], code: 5, why: 'settings file not JSON' },
  ];
}

describe('bad input', { timeout: TIMEOUT }, () => {
  beforeAll(async () => {
    dir = freshDataDir();
    const aside = tempDir('crux-bad-input-');
    files = {
      missing: join(aside, 'no-such-file'),
      directory: aside,
      notJson: join(aside, 'not.json'),
      notPackage: join(aside, 'not-a-package.json'),
      badTask: join(aside, 'bad-task.json'),
      jsonArray: join(aside, 'array.json'),
    };
    fs.writeFileSync(files.notJson, 'this is { not json');
    fs.writeFileSync(files.notPackage, '{"payload_b64":42,"hello":"world"}');
    fs.writeFileSync(files.badTask, '{"requester":["not","a","string"],"sources":"nope"}');
    fs.writeFileSync(files.jsonArray, '[1,2,3]');
    for (const args of [
      ['session', 'put', 'a', '{"n":1}'],
      ['session', 'put', 'closed', '{}'],
      ['session', 'close', 'closed'],
      ['case', 'record', '--task', 'deploy web', '--action', 'a', '--outcome', 'o'],
      ['--agent', 'alice', 'session', 'put', 'a', '{"from":"alice"}'],
      ['handoff', 'mint', 'a', '--from', 'alice', '--to', 'bob'],
    ]) {
      const run = await inProcess(dir, args);
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    }
    // Reads that may warm caches, so that only a failing command could change the directory (the seed and these
    // in-process: the rows below are processes).
    for (const args of [
      ['session', 'list', '--all'],
      ['session', 'get', 'a'],
      ['case', 'list'],
      ['handoff', 'list'],
      ['journal', 'check'],
    ])
      await inProcess(dir, args);
  });

  it('every row exits with its documented code, one clean line on stderr, and the data directory untouched', async () => {
    const table = rows();
    const before = snapshotDir(dir);
    const results = await pool(table, 4, async (row, i) => ({
      row,
      run: await (asProcess(row, i) ? crux : inProcess)(dir, row.args, { input: row.input ?? '', env: row.env ?? {} }),
    }));
    const wrong = results
      .filter(
        ({ row, run }) =>
          run.exitCode !== row.code ||
          run.stderr.split('\n').filter(Boolean).length !== 1 ||
          /\n\s+at |internal error|\u001b/.test(run.stderr) ||
          !run.stderr.startsWith('crux: '),
      )
      .map(({ row, run }) => `${row.why} [${row.args.join(' ').slice(0, 80)}]: expected ${row.code}, got ${run.exitCode}: ${run.stderr.trim().slice(0, 300)}`);
    expect(wrong).toEqual([]);
    for (const { run } of results) expect([0, 1]).not.toContain(run.exitCode);
    expect(snapshotDir(dir)).toEqual(before);
  });

  it('with --json, a bad input prints the JSON error object with the same code', async () => {
    const table = rows()
      .filter((r) => r.code !== 2 && !r.args.includes('--data-dir'))
      .slice(0, 40);
    // In-process: the error document is the program's (the test above holds each row's process to its one line).
    const results = await pool(table, 4, async (row) => ({
      row,
      run: await inProcess(dir, ['--json', ...row.args], { input: row.input ?? '', env: row.env ?? {} }),
    }));
    for (const { row, run } of results) {
      expect(run.exitCode, row.why).toBe(row.code);
      expect(JSON.parse(run.stderr).error.code, row.why).toBe(row.code);
      expect(run.stdout, row.why).toBe('');
    }
  });

  it('the table covers every command crux has (extend it when a command lands)', async () => {
    const commands = (await walkHelp()).filter((e) => e.path.length > 0 && !e.hasSubcommands).map((e) => e.path.join(' '));
    const covered = new Set(
      rows().map((r) =>
        r.args
          .filter((a) => !a.startsWith('-'))
          .slice(0, 2)
          .join(' '),
      ),
    );
    const topLevel = new Set(rows().map((r) => r.args.filter((a) => !a.startsWith('-'))[0]));
    const missing = commands.filter((c) => !covered.has(c) && !(c.split(' ').length === 1 && topLevel.has(c)));
    expect(missing, 'commands without a bad-input row').toEqual([]);
  });
});
