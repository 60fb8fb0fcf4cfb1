// Lists as the operator and a script meet them (SPEC §8): ids whole at 80 columns, the columns people came for,
// newest first, 50 rows on a terminal with a last line saying how many more, tab-separated and uncut when piped,
// --no-headers, and --quiet printing ids.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { freshDataDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { onTty, screenWidth } from '../helpers/tty';

const BOX = /[│┌┐└┘├┤┬┴┼─]/;
const UUID = (n: number) => `f61400e1-2b3c-4d5e-8f90-${String(n).padStart(12, '0')}`;
const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

/** One exported session line (what `session import` reads). */
const sessionLine = (id: string, minutes: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    session_id: id,
    agent: null,
    status: 'active',
    created_at: at(minutes),
    updated_at: at(minutes),
    total_tokens: 0,
    expires_at: null,
    state: {},
    ...extra,
  });

async function ok(dir: string, args: string[], opts: Parameters<typeof crux>[2] = {}) {
  const run = await crux(dir, args, opts);
  expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(0);
  return run;
}

describe('lists', () => {
  const dir = freshDataDir();
  const file = join(dir, '..', 'sessions.jsonl');
  const NOW = ['--now', at(120)];
  const caseIds: string[] = [];

  beforeAll(async () => {
    // 60 sessions with Claude Code's UUIDs, the newest last; one closed.
    fs.mkdirSync(join(dir, '..'), { recursive: true });
    fs.writeFileSync(file, Array.from({ length: 60 }, (_, i) => `${sessionLine(UUID(i), i, { actor: i === 59 ? 'ci' : null })}\n`).join(''));
    await ok(dir, ['session', 'import', file]);
    await ok(dir, [...NOW, 'session', 'close', UUID(0), '--outcome', 'failed']);
    for (const [task, action] of [
      ['renew the tls certificate of the edge nodes', 'certbot renew --cert-name edge'],
      ['renew the tls certificate of the edge nodes', 'acme.sh --renew -d edge.example'],
    ] as const)
      caseIds.push((await ok(dir, ['case', 'record', '--task', task, '--action', action, '--outcome', 'renewed'])).stdout.trim());
    caseIds.push(
      (
        await ok(dir, ['case', 'record', '--task', `a task of many characters ${'x'.repeat(100)} and its end`, '--action', 'a', '--outcome', 'o'])
      ).stdout.trim(),
    );
  });

  it('at 80 columns session list keeps every id whole; an empty column is not shown', async () => {
    const { screen } = await onTty(dir, [...NOW, 'session', 'list']);
    const lines = screen.split('\n').filter((l) => BOX.test(l));
    for (const line of lines) expect(screenWidth(line), line).toBeLessThanOrEqual(80);
    for (let i = 59; i > 9; i--) expect(screen).toContain(`│ ${UUID(i)} │`);
    for (const line of lines) expect(line).not.toContain('…');
    // No session but the newest has an actor, and no active one an outcome: the actor column shows, outcome not.
    expect(lines[1]).not.toContain('outcome');
  });

  it('session list --all shows the outcome of closed sessions', async () => {
    const { screen } = await onTty(dir, [...NOW, 'session', 'list', '--all', '--sort', 'updated']);
    expect(screen).toContain('outcome');
    expect(screen).toMatch(new RegExp(`│ ${UUID(0)} │ closed +│ failed +│`));
    const piped = (await ok(dir, [...NOW, 'session', 'list', '--all'])).stdout.split('\n');
    expect(
      piped
        .find((l) => l.startsWith(UUID(0)))!
        .split('\t')
        .slice(1, 3),
    ).toEqual(['closed', 'failed']);
  });

  it('on a terminal a list stops at 50 rows and says how many more there are and how to see them', async () => {
    const { screen } = await onTty(dir, [...NOW, 'session', 'list']);
    const rows = screen.split('\n').filter((l) => l.startsWith('│ f61400e1'));
    expect(rows).toHaveLength(50);
    // Newest first.
    expect(rows[0]).toContain(UUID(59));
    expect(screen).toMatch(/┘\n(\u001b\[2m)?… 9 more sessions \(50 of 59 shown: --limit <n> shows n, --limit 0 shows all\)/);
    const all = await onTty(dir, [...NOW, 'session', 'list', '--limit', '0']);
    expect(all.screen.split('\n').filter((l) => l.startsWith('│ f61400e1'))).toHaveLength(59);
    expect(all.screen).not.toContain('more session');
    const five = await onTty(dir, [...NOW, 'session', 'list', '--limit', '5']);
    expect(five.screen).toContain('… 54 more sessions');
  });

  it('piped and with --json nothing is cut unless --limit is given; COLUMNS is ignored', async () => {
    const piped = await ok(dir, [...NOW, 'session', 'list'], { env: { COLUMNS: '40' } });
    const lines = piped.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(60);
    expect(piped.stdout).not.toContain('…');
    expect(piped.stdout).not.toMatch(BOX);
    expect(JSON.parse((await ok(dir, ['--json', ...NOW, 'session', 'list'])).stdout).sessions).toHaveLength(59);
    expect((await ok(dir, [...NOW, 'session', 'list', '--limit', '3'])).stdout.trimEnd().split('\n')).toHaveLength(4);
    const cases = await ok(dir, ['case', 'list'], { env: { COLUMNS: '40' } });
    expect(cases.stdout).toContain(`a task of many characters ${'x'.repeat(100)} and its end\t`);
  });

  it('--no-headers leaves the header line out, piped and on a terminal', async () => {
    const piped = (await ok(dir, [...NOW, 'session', 'list', '--no-headers', '--limit', '2'])).stdout;
    expect(piped).toBe(
      piped
        .split('\n')
        .filter((l) => l.startsWith('f61400e1'))
        .map((l) => `${l}\n`)
        .join(''),
    );
    expect(piped.split('\n')).toHaveLength(3);
    for (const args of [
      ['case', 'list'],
      ['handoff', 'list'],
      ['case', 'retrieve', 'tls'],
      ['session', 'history', UUID(1)],
    ]) {
      expect((await ok(dir, [...args, '--no-headers'])).stdout.split('\n')[0], args.join(' ')).not.toMatch(/^(id|similarity|seq)\t/);
    }
    const { screen } = await onTty(dir, ['case', 'list', '--no-headers']);
    expect(screen).not.toContain('created');
  });

  it('case retrieve shows the action, and two results with one task are told apart at 80 columns', async () => {
    const { screen } = await onTty(dir, ['case', 'retrieve', 'renew', 'tls', 'certificate']);
    for (const line of screen.split('\n').filter((l) => BOX.test(l))) expect(screenWidth(line), line).toBeLessThanOrEqual(80);
    expect(screen).toContain('action');
    expect(screen).toContain(caseIds[0]);
    expect(screen).toContain(caseIds[1]);
    const rows = screen.split('\n').filter((l) => l.includes('c_'));
    expect(new Set(rows).size).toBe(2);
    expect(screen).toMatch(/certbot/);
    const piped = (await ok(dir, ['case', 'retrieve', 'renew', 'tls'])).stdout.split('\n');
    expect(piped[0]).toBe('similarity\tid\ttask\taction\tsuccess\toutcome\treward\treused');
    expect(
      piped
        .slice(1, 3)
        .map((l) => l.split('\t')[3])
        .sort(),
    ).toEqual(['acme.sh --renew -d edge.example', 'certbot renew --cert-name edge']);
  });

  it('case list: newest first, the task whole on a wide terminal, cut to fit a narrow one', async () => {
    const wide = await onTty(dir, ['case', 'list'], 250);
    expect(wide.screen).toContain(`a task of many characters ${'x'.repeat(100)} and its end`);
    const rows = wide.screen.split('\n').filter((l) => l.includes('c_'));
    expect(rows.map((r) => r.match(/c_[0-9a-f]+/)![0])).toEqual([...caseIds].reverse());
    const narrow = await onTty(dir, ['case', 'list'], 80);
    for (const line of narrow.screen.split('\n').filter((l) => BOX.test(l))) expect(screenWidth(line)).toBeLessThanOrEqual(80);
    for (const id of caseIds) expect(narrow.screen).toContain(id);
  });

  it('--quiet: a list prints its ids one a line; case record prints the new id; a plain write prints nothing', async () => {
    const ids = (await ok(dir, ['--quiet', ...NOW, 'session', 'list'])).stdout;
    expect(ids).toBe(`${Array.from({ length: 59 }, (_, i) => UUID(59 - i)).join('\n')}\n`);
    expect((await ok(dir, ['-q', 'case', 'list'])).stdout).toBe(`${[...caseIds].reverse().join('\n')}\n`);
    expect((await ok(dir, ['-q', 'case', 'retrieve', 'tls'])).stdout.trim().split('\n').sort()).toEqual([caseIds[0], caseIds[1]].sort());
    expect((await ok(dir, ['-q', 'session', 'history', UUID(0)])).stdout).toMatch(/^\d+\n\d+\n$/);
    const recorded = await ok(dir, ['--quiet', 'case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o']);
    expect(recorded.stdout).toMatch(/^c_[0-9a-f]{24}\n$/);
    expect((await ok(dir, ['--quiet', 'case', 'delete', recorded.stdout.trim(), '--yes'])).stdout).toBe('');
    expect((await ok(dir, ['--quiet', 'session', 'put', 'quiet-one', '{}'])).stdout).toBe('');
    expect((await ok(dir, ['--quiet', 'session', 'delete', 'quiet-one', '--yes'])).stdout).toBe('');
  });

  it('handoff list: newest first, --quiet prints the package ids; mint --out --quiet prints the new id', async () => {
    const pkgs = [join(dir, '..', 'p1.json'), join(dir, '..', 'p2.json')];
    const minted: string[] = [];
    for (const [i, pkg] of pkgs.entries()) {
      await ok(dir, ['--agent', 'a', 'session', 'put', `h${i}`, '{}']);
      minted.push((await ok(dir, ['--quiet', '--agent', 'a', 'handoff', 'mint', `h${i}`, '--out', pkg])).stdout.trim());
    }
    for (const id of minted) expect(id).toMatch(/^h_[0-9a-f]{24}$/);
    expect((await ok(dir, ['-q', 'handoff', 'list'])).stdout).toBe(`${[...minted].reverse().join('\n')}\n`);
    expect(JSON.parse((await ok(dir, ['--json', 'handoff', 'list', '--sort', 'created'])).stdout).handoffs.map((h: any) => h.handoff_id)).toEqual(minted);
  });
});

describe('the count of the rest on a terminal', () => {
  it('is what the whole list holds, from the index through freezes and merges, and from the journal alone', async () => {
    const dir = freshDataDir();
    const file = join(dir, '..', 'many.jsonl');
    const NOW = ['--now', at(600)];
    // A small index log, so that writes freeze it into runs and merge them while the lists are counted.
    const env = { CRUX_TEST_INDEX_LOG_ENTRIES: '8' };
    fs.mkdirSync(join(dir, '..'), { recursive: true });
    // 120 sessions: active ones (listed), and every fifth stale enough to be stranded (older than a day).
    const lines = Array.from({ length: 120 }, (_, i) => sessionLine(`s${i}`, i % 5 === 0 ? -3000 + i : i));
    fs.writeFileSync(file, lines.map((l) => `${l}\n`).join(''));
    await ok(dir, ['session', 'import', file], { env });
    // The whole list, from a copy of the journal alone (a whole read here would rebuild this index from a replay).
    const truth = join(dir, '..', 'truth');
    const expectCounts = async (why: string) => {
      fs.rmSync(truth, { recursive: true, force: true });
      fs.mkdirSync(truth, { mode: 0o700 });
      fs.copyFileSync(join(dir, 'sessions.jsonl'), join(truth, 'sessions.jsonl'));
      for (const args of [[], ['--stranded']]) {
        const whole = JSON.parse((await ok(truth, ['--json', ...NOW, 'session', 'list', ...args])).stdout).sessions.length;
        const { screen } = await onTty(dir, [...NOW, 'session', 'list', ...args, '--limit', '5'], 120, env);
        expect(screen, `${why} ${args.join(' ')}`).toContain(`… ${whole - 5} more sessions (5 of ${whole} shown`);
      }
    };
    await expectCounts('imported');
    // An archived session was parked on purpose: stale, but not stranded (SPEC §4), in the index's count too.
    await ok(dir, [...NOW, 'session', 'archive', 's10'], { env });
    await expectCounts('a stale one archived');
    // Writes that move sessions in and out of both lists: new ones, closes, deletes, puts that make a stale one fresh.
    for (let i = 0; i < 12; i++) {
      if (i % 4 === 0) await ok(dir, [...NOW, 'session', 'put', `new-${i}`, '{}'], { env });
      if (i % 4 === 1) await ok(dir, [...NOW, 'session', 'close', `s${i * 5}`], { env });
      if (i % 4 === 2) await ok(dir, [...NOW, 'session', 'delete', `s${i * 3 + 1}`, '--yes'], { env });
      if (i % 4 === 3) await ok(dir, [...NOW, 'session', 'put', `s${i * 5}`, '{"fresh":true}'], { env });
      if (i % 3 === 2) await expectCounts(`after write ${i}`);
    }
    fs.rmSync(join(dir, 'cache'), { recursive: true });
    await expectCounts('without the cache');
  });
});
