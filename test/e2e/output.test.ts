// What the operator sees: tables within an 80-column terminal, plain columns when piped, no raw control
// character from stored text anywhere, --limit, warnings in --json over damage, --quiet never hiding the product.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { freshDataDir } from '../helpers/cli';
// In-process: what these commands answer, not the process (test/helpers/run-cli.ts).
import { crux } from '../helpers/run-cli';
import { onTty, screenWidth } from '../helpers/tty';

const HOSTILE = '\u001b]0;OWNED\u0007\u001b[2J\u001b[31mred \u001b]8;;http://evil.example\u001b\\link\u001b]8;;\u001b\\ \u202eexe.txt\u009b';
// Any control a terminal acts on (newline, CR and tab aside); SGR colour is checked apart.
const RAW = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const BOX = /[│┌┐└┘├┤┬┴┼─]/;
const SGR = /\u001b\[[0-9;]*m/g;
/** Columns a line takes on screen (the test data is ASCII and box characters, one column each). */
const width = screenWidth;

const json = (run: { stdout: string }) => JSON.parse(run.stdout);

describe('operator output', () => {
  const dir = freshDataDir();
  let caseId = '';
  const TABLES = [
    ['session', 'list', '--all'],
    ['session', 'list', '--all', '--all-agents'],
    ['case', 'list'],
    ['case', 'retrieve', 'rotate', 'certificate'],
    ['handoff', 'list'],
    ['doctor'],
    ['journal', 'check'],
    ['session', 'machine'],
  ];

  beforeAll(async () => {
    const run = async (args: string[]) => {
      const r = await crux(dir, args);
      expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r;
    };
    await run(['session', 'put', 'build-42', '{"step":3}', '--ttl', '2h', '--tokens', '1200']);
    await run(['--agent', 'planner', 'session', 'put', 'a-rather-long-session-identifier-of-a-planner', '{}', '--ttl', '7d']);
    await run(['--agent', 'planner', '--actor', 'alice', 'session', 'put', 'handed', '{}']);
    await run(['--agent', 'planner', 'handoff', 'mint', 'handed', '--to', 'builder', '--message', `note ${HOSTILE}`, '--out', join(dir, '..', 'pkg.json')]);
    await run(['--agent', 'builder', 'handoff', 'accept', join(dir, '..', 'pkg.json')]);
    await run(['session', 'put', 'archived-one', '{}']);
    await run(['session', 'archive', 'archived-one', '--reason', `old ${HOSTILE}`]);
    await run(['session', 'close', 'build-42', '--summary', `done ${HOSTILE}`]);
    caseId = (
      await run([
        'case',
        'record',
        '--task',
        `rotate the TLS certificate ${HOSTILE} on every edge node before the weekend`,
        '--action',
        `certbot ${HOSTILE}`,
        '--outcome',
        `renewed ${HOSTILE}`,
        '--context',
        `a\nmulti-line ${HOSTILE}`,
        '--tag',
        `tls${HOSTILE}`,
      ])
    ).stdout.trim();
    for (let i = 0; i < 5; i++) await run(['case', 'record', '--task', `task ${i} rotate`, '--action', 'a', '--outcome', 'o', ...(i % 2 ? ['--failure'] : [])]);
  });

  it('piped: tab-separated values, one row a line, one-word headers, no box drawing and no colour', async () => {
    for (const args of TABLES) {
      const r = await crux(dir, args);
      expect(r.exitCode, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).not.toMatch(BOX);
      expect(r.stdout, args.join(' ')).not.toMatch(/\u001b/);
    }
    const list = (await crux(dir, ['session', 'list', '--all'])).stdout.split('\n');
    expect(list[0]).toBe('id\tstatus\toutcome\tupdated\tfreshness\ttokens\texpires\tactor');
    // cut -f2 picks a column: the second field is the status; every row has every field.
    const rows = list.slice(1).filter((l) => l !== '' && !l.includes('hidden'));
    expect(rows.map((l) => l.split('\t')[1]).sort()).toEqual(['archived', 'closed']);
    for (const row of rows) expect(row.split('\t')).toHaveLength(8);
    expect(rows.find((l) => l.startsWith('build-42\t'))!.split('\t')[2]).toBe('completed');
    expect((await crux(dir, ['session', 'history', 'build-42'])).stdout.split('\n')[0]).toBe('seq\ttime\tevent\tactor\tstatus\tstate_bytes');
    expect((await crux(dir, ['doctor'])).stdout).toContain('journal\tbytes\trecords\tlast_write\thealth\tquarantined\n');
  });

  it('on an 80-column terminal every line of every table fits, box-drawn', async () => {
    for (const args of TABLES) {
      const { exitCode, screen } = await onTty(dir, args);
      expect(exitCode, args.join(' ')).toBe(0);
      const tableLines = screen.split('\n').filter((l) => BOX.test(l));
      expect(tableLines.length, `${args.join(' ')}\n${screen}`).toBeGreaterThan(0);
      for (const line of tableLines) expect(width(line), `${args.join(' ')}: ${line}`).toBeLessThanOrEqual(80);
      expect(screen.replace(SGR, ''), args.join(' ')).not.toMatch(RAW);
    }
    // doctor is one screen: its prose wraps under its labels too.
    for (const line of (await onTty(dir, ['doctor'])).screen.split('\n')) expect(width(line), line).toBeLessThanOrEqual(80);
  });

  it('fits a 40-column terminal too, and COLUMNS overrides the terminal', async () => {
    for (const args of [
      ['case', 'list'],
      ['session', 'list', '--all', '--all-agents'],
    ]) {
      const narrow = await onTty(dir, args, 40);
      for (const line of narrow.screen.split('\n').filter((l) => BOX.test(l))) expect(width(line), line).toBeLessThanOrEqual(40);
      const wide = await onTty(dir, args, 40, { COLUMNS: '120' });
      const lines = wide.screen.split('\n').filter((l) => BOX.test(l));
      expect(Math.max(...lines.map(width))).toBeGreaterThan(40);
      for (const line of lines) expect(width(line)).toBeLessThanOrEqual(120);
    }
  });

  it('writes no raw control character from stored text, piped or on a terminal', async () => {
    const views = [
      ...TABLES,
      ['case', 'show', caseId],
      ['session', 'close', 'build-42', '--summary', 'again'],
      ['handoff', 'inspect', join(dir, '..', 'pkg.json'), '--as', 'builder'],
    ];
    for (const args of views) {
      const piped = await crux(dir, args);
      expect(piped.stdout + piped.stderr, args.join(' ')).not.toMatch(RAW);
      const tty = await onTty(dir, args);
      expect(tty.screen.replace(SGR, ''), args.join(' ')).not.toMatch(RAW);
      expect(tty.screen.replace(SGR, ''), args.join(' ')).not.toMatch(/\u001b/);
    }
    // Shown escaped, not dropped.
    expect((await crux(dir, ['case', 'show', caseId])).stdout).toContain('\\x1b]0;OWNED\\x07\\x1b[2J');
    expect((await crux(dir, ['session', 'close', 'build-42'])).stdout).toContain('\\u202eexe.txt');
  });

  it('--limit, --sort and the filters cut every list, --json and human alike', async () => {
    expect(json(await crux(dir, ['--json', 'case', 'list', '--limit', '2'])).cases).toHaveLength(2);
    expect((await crux(dir, ['case', 'list', '--limit', '2'])).stdout.trim().split('\n')).toHaveLength(3);
    expect(json(await crux(dir, ['--json', 'case', 'list', '--only-failure'])).cases.map((c: any) => c.success)).toEqual([false, false]);
    expect(json(await crux(dir, ['--json', 'case', 'list', '--sort', '-task', '--limit', '1'])).cases[0].task).toBe('task 4 rotate');
    expect(json(await crux(dir, ['--json', 'case', 'list', '--tag', `tls${HOSTILE}`])).cases.map((c: any) => c.case_id)).toEqual([caseId]);
    expect(json(await crux(dir, ['--json', 'case', 'list', '--tag', 'nope'])).cases).toEqual([]);
    expect((await crux(dir, ['case', 'list', '--only-success', '--only-failure'])).exitCode).toBe(2);
    const sessions = json(await crux(dir, ['--json', 'session', 'list', '--all', '--all-agents', '--sort=id']));
    const ids = sessions.sessions.map((s: any) => s.session_id);
    expect(ids).toEqual([...ids].sort());
    expect(
      json(await crux(dir, ['--json', 'session', 'list', '--status', 'closed,archived']))
        .sessions.map((s: any) => s.status)
        .sort(),
    ).toEqual(['archived', 'closed']);
    expect(json(await crux(dir, ['--json', 'session', 'list', '--all', '--limit', '1'])).sessions).toHaveLength(1);
    expect(json(await crux(dir, ['--json', 'handoff', 'list', '--status', 'accepted', '--from', 'planner'])).handoffs).toHaveLength(1);
    expect(json(await crux(dir, ['--json', 'handoff', 'list', '--to', 'nobody'])).handoffs).toHaveLength(0);
    // --limit 0 is every row; -1 and x are refused with one message.
    expect(json(await crux(dir, ['--json', 'case', 'list', '--limit', '0'])).cases).toHaveLength(6);
    const refusals = await Promise.all(['-1', 'x'].map((n) => crux(dir, ['case', 'list', '--limit', n])));
    for (const r of refusals) expect(r.stderr).toMatch(/^crux: --limit must be a whole number ≥ 0: /);
    for (const bad of [
      ['case', 'list', '--limit', '-1'],
      ['case', 'list', '--limit', 'x'],
      ['session', 'list', '--sort', 'colour'],
      ['session', 'list', '--status', 'sleeping'],
    ]) {
      const r = await crux(dir, bad);
      expect(r.exitCode, bad.join(' ')).toBe(5);
    }
  });

  it('colour: --color=always through a pipe (less -R), never with --no-color, NO_COLOR or --color=never, FORCE_COLOR', async () => {
    expect((await crux(dir, ['--color=always', 'case', 'list'])).stdout).toMatch(SGR);
    expect((await crux(dir, ['case', 'list'], { env: { FORCE_COLOR: '1' } })).stdout).toMatch(SGR);
    expect((await crux(dir, ['case', 'list'], { env: { FORCE_COLOR: '0' } })).stdout).not.toMatch(/\u001b/);
    for (const args of [
      ['--no-color', 'case', 'list'],
      ['--color', 'never', 'case', 'list'],
    ])
      expect((await onTty(dir, args)).screen).not.toMatch(/\u001b/);
    expect((await onTty(dir, ['case', 'list'], 80, { NO_COLOR: '1' })).screen).not.toMatch(/\u001b/);
    expect((await onTty(dir, ['case', 'list'])).screen).toMatch(SGR);
    // Every colour is reset before the line ends.
    for (const line of (await crux(dir, ['--color=always', 'case', 'list'])).stdout.split('\n')) expect(line).not.toMatch(/\u001b\[(3[0-8]|1|2)m[^\u001b]*$/);
    expect((await crux(dir, ['--color=sometimes', 'case', 'list'])).exitCode).toBe(2);
  });

  it('JSON to a terminal (--json, exports, session get) carries C1 and bidi controls as \\u escapes; piped, the exact bytes', async () => {
    const state = '{"name":"admin\u202egnp.exe","csi":"\u009b2J"}';
    expect((await crux(dir, ['session', 'put', 'rtl', state])).exitCode).toBe(0);
    expect((await crux(dir, ['session', 'get', 'rtl'])).stdout).toBe(state);
    const tty = (await onTty(dir, ['session', 'get', 'rtl'])).screen;
    expect(tty).toBe('{"name":"admin\\u202egnp.exe","csi":"\\u009b2J"}\n');
    expect(JSON.parse(tty)).toEqual(JSON.parse(state));
    for (const args of [
      ['--json', 'session', 'get', 'rtl'],
      ['session', 'export'],
      ['case', 'export'],
      ['--json', 'case', 'list'],
      ['--json', 'session', 'list', '--all'],
    ]) {
      const screen = (await onTty(dir, args)).screen;
      expect(screen, args.join(' ')).not.toMatch(RAW);
      expect(screen, args.join(' ')).toContain('\\u202e');
    }
    expect((await crux(dir, ['--json', 'case', 'list'])).stdout).toContain('\u202e');
    await crux(dir, ['session', 'delete', 'rtl', '--yes']);
  });

  it('session get: a newline on a terminal, the exact bytes piped, and --quiet does not hide them', async () => {
    expect((await crux(dir, ['--agent', 'planner', 'session', 'get', 'a-rather-long-session-identifier-of-a-planner'])).stdout).toBe('{}');
    expect((await crux(dir, ['--quiet', '--agent', 'planner', 'session', 'get', 'a-rather-long-session-identifier-of-a-planner'])).stdout).toBe('{}');
    expect((await onTty(dir, ['--agent', 'planner', 'session', 'get', 'a-rather-long-session-identifier-of-a-planner'])).screen).toBe('{}\n');
  });
});

describe('scripts see what people see', () => {
  it('handoff mint --quiet > pkg.json prints the package', async () => {
    const dir = freshDataDir();
    await crux(dir, ['--agent', 'a', 'session', 'put', 's', '{}']);
    const mint = await crux(dir, ['--quiet', '--agent', 'a', 'handoff', 'mint', 's']);
    expect(mint.exitCode).toBe(0);
    expect(JSON.parse(mint.stdout)).toHaveProperty('payload_b64');
    const pkg = join(dir, '..', 'pkg.json');
    fs.writeFileSync(pkg, mint.stdout);
    expect((await crux(dir, ['--agent', 'b', 'handoff', 'accept', pkg])).exitCode).toBe(0);
  });

  it('--json documents carry "warnings" for the damaged lines their replay passed over', async () => {
    const dir = freshDataDir();
    for (const id of ['a', 'b', 'c']) await crux(dir, ['session', 'put', id, `{"id":"${id}"}`]);
    await crux(dir, ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o']);
    const clean = json(await crux(dir, ['--json', 'session', 'list']));
    expect(clean).not.toHaveProperty('warnings');
    const path = join(dir, 'sessions.jsonl');
    const lines = fs.readFileSync(path, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('\\"id\\":\\"b\\"', '\\"id\\":\\"B\\"');
    fs.writeFileSync(path, lines.join('\n'));
    const warning = { file: 'sessions.jsonl', line: 2, reason: 'hash mismatch' };
    const list = await crux(dir, ['--json', 'session', 'list']);
    expect(list.exitCode).toBe(0);
    expect(json(list).warnings).toEqual(expect.arrayContaining([warning]));
    expect(json(await crux(dir, ['--json', 'session', 'get', 'a'])).warnings).toEqual(expect.arrayContaining([warning]));
    expect(json(await crux(dir, ['--json', 'session', 'export'])).warnings).toEqual(expect.arrayContaining([warning]));
    // A store untouched by the damage reports none.
    expect(json(await crux(dir, ['--json', 'case', 'list']))).not.toHaveProperty('warnings');
  });
});
