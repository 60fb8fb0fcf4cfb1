import { execa } from 'execa';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CRUX, freshDataDir, snapshotDir, tempDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { walkHelp, type HelpEntry } from '../helpers/help';
import { toolsSkipReason } from '../helpers/tools';

let tree: HelpEntry[];
let bashScript: string;

beforeAll(async () => {
  tree = await walkHelp();
  const run = await crux(freshDataDir(), ['completion', 'bash']);
  expect(run.exitCode).toBe(0);
  bashScript = join(tempDir(), 'crux.bash');
  fs.writeFileSync(bashScript, run.stdout);
});

/** What the bash completion offers after `crux <words…>` with the cursor on the last word. */
async function complete(words: string[], command = 'crux'): Promise<string[]> {
  const line = [command, ...words].map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  const script = `source '${bashScript}'; COMP_WORDS=(${line}); COMP_CWORD=${words.length}; _crux; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const run = await execa('bash', ['-c', script], { reject: false });
  expect(run.stderr).toBe('');
  return String(run.stdout).split('\n').filter(Boolean);
}

const END = '(end of a line)';
/**
 * What the bash completion offers after each of `lines` (`crux <words…>`, the cursor on the last word): one bash
 * that sources the script once and completes every line in turn, each from an empty COMPREPLY.
 */
async function completeEach(lines: string[][]): Promise<string[][]> {
  const quote = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`;
  const each = lines.map(
    (words) =>
      `COMPREPLY=(); COMP_WORDS=(${['crux', ...words].map(quote).join(' ')}); COMP_CWORD=${words.length}; _crux; printf '%s\\n' "\${COMPREPLY[@]}"; printf '%s\\n' '${END}'`,
  );
  const run = await execa('bash', ['-c', `source '${bashScript}'\n${each.join('\n')}`], { reject: false });
  expect(run.stderr).toBe('');
  const answers: string[][] = [[]];
  for (const word of String(run.stdout).split('\n').filter(Boolean)) {
    if (word === END) answers.push([]);
    else answers.at(-1)!.push(word);
  }
  expect(answers.pop()).toEqual([]);
  expect(answers).toHaveLength(lines.length);
  return answers;
}

describe('crux completion', () => {
  it('prints a bash script that bash accepts and that names every command', async () => {
    expect((await execa('bash', ['-n', bashScript], { reject: false })).exitCode).toBe(0);
    const text = fs.readFileSync(bashScript, 'utf8');
    expect(tree.length).toBeGreaterThan(5);
    for (const entry of tree.slice(1)) {
      expect(text, entry.path.join(' ')).toContain(`'${entry.path.join(' ')}')`);
    }
  });

  it('completes every subcommand of every group, and every option of every command', async () => {
    const groups = tree.filter((entry) => entry.hasSubcommands);
    const answers = await completeEach([...groups.map((entry) => [...entry.path, '']), ...tree.map((entry) => [...entry.path, '-'])]);
    groups.forEach((entry, i) => {
      const offered = answers[i]!;
      const children = tree.filter((e) => e.path.length === entry.path.length + 1 && entry.path.every((p, j) => e.path[j] === p));
      expect(children.length, entry.path.join(' ')).toBeGreaterThan(0);
      for (const child of children) {
        expect(offered, entry.path.join(' ')).toContain(child.path.at(-1));
        for (const alias of child.aliases) expect(offered).toContain(alias);
      }
    });
    tree.forEach((entry, i) => {
      const offered = answers[groups.length + i]!;
      for (const option of entry.options) expect(offered, `${entry.path.join(' ')} ${option}`).toContain(option);
    });
  });

  it('follows aliases, skips option values, and completes choices and files', async () => {
    expect(await complete(['--data-dir', '/tmp', 'se'])).toEqual(['session']);
    expect(await complete(['session', 'ls', '--st'])).toEqual(expect.arrayContaining(['--stranded', '--stale-after']));
    expect(await complete(['completion', ''])).toEqual(['bash', 'zsh']);
    const dir = tempDir();
    fs.writeFileSync(join(dir, 'state.json'), '{}');
    expect(await complete(['session', 'put', 'x', '--file', join(dir, 'st')])).toEqual([join(dir, 'state.json')]);
    expect(await complete(['session', 'put', 'x', '--json', '--'])).toContain('--add-tokens');
  });

  it('prints a zsh script that names every command and option', async () => {
    const run = await crux(freshDataDir(), ['completion', 'zsh']);
    expect(run.exitCode).toBe(0);
    expect(run.stdout.startsWith('#compdef crux\n')).toBe(true);
    for (const entry of tree.slice(1)) expect(run.stdout, entry.path.join(' ')).toContain(`'${entry.path.join(' ')}'`);
    for (const option of new Set(tree.flatMap((e) => e.options))) expect(run.stdout).toContain(`'${option}:`);
    // Where zsh is installed (always in CI), it must parse the script too.
    if (toolsSkipReason('zsh') === undefined) expect((await execa('zsh', ['-n', '-c', run.stdout], { reject: false })).exitCode).toBe(0);
  });

  it('completes option values that crux checks itself: --outcome, --alg, the shell', async () => {
    expect(await complete(['session', 'close', 's', '--outcome', ''])).toEqual(['completed', 'failed', 'abandoned']);
    expect(await complete(['session', 'close', 's', '--outcome', 'f'])).toEqual(['failed']);
    expect(await complete(['handoff', 'mint', 's', '--alg', ''])).toEqual(['blake3-mac-v1', 'ed25519']);
    expect(await complete(['completion', 'z'])).toEqual(['zsh']);
    // List options: --sort's keys (and their descending -key), --status's statuses.
    expect(await complete(['session', 'list', '--sort', 'to'])).toEqual(['tokens']);
    expect(await complete(['session', 'list', '--sort', '-to'])).toEqual(['-tokens']);
    expect(await complete(['session', 'list', '--status', ''])).toEqual(expect.arrayContaining(['active', 'closed', 'archived']));
    expect(await complete(['handoff', 'list', '--status', ''])).toEqual(['outstanding', 'accepted', 'expired']);
    expect(await complete(['case', 'list', '--sort', ''])).toEqual(expect.arrayContaining(['reward', '-reward']));
    // case record's --outcome is free text: nothing to offer.
    expect(await complete(['case', 'record', '--outcome', ''])).toEqual([]);
  });

  it('completes session, case and handoff ids from the data directory of the line (--data-dir, --agent), reading only', async () => {
    const dir = freshDataDir();
    const env = { env: { CRUX_HANDOFF_SECRET: 'completion-secret' } };
    await crux(dir, ['session', 'put', 'build-42', '{}']);
    await crux(dir, ['session', 'put', 'build-43', '{}']);
    await crux(dir, ['--agent', 'planner', 'session', 'put', 'plan-7', '{}']);
    await crux(dir, ['--agent', 'planner', 'session', 'put', 'plan-8', '{}']);
    const caseId = JSON.parse((await crux(dir, ['--json', 'case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o'])).stdout).case.case_id;
    const minted = JSON.parse(
      Buffer.from(JSON.parse((await crux(dir, ['--agent', 'planner', 'handoff', 'mint', 'plan-8'], env)).stdout).payload_b64, 'base64').toString(),
    );
    // Read-only: no journal, key or lock is touched (a reader may refresh the derived cache/, as every read does).
    const data = () => Object.fromEntries(Object.entries(snapshotDir(dir)).filter(([path]) => !path.startsWith('cache/')));
    const before = data();
    expect(await complete(['--data-dir', dir, 'session', 'get', ''], CRUX)).toEqual(expect.arrayContaining(['build-42', 'build-43']));
    expect(await complete(['--data-dir', dir, 'session', 'get', 'build-4'], CRUX)).toHaveLength(2);
    expect(await complete(['session', 'close', `--data-dir=${dir}`, '--agent', 'planner', 'p'], CRUX)).toEqual(expect.arrayContaining(['plan-7', 'plan-8']));
    expect(await complete(['--data-dir', dir, '--agent', 'planner', 'session', 'get', 'b'], CRUX)).toEqual([]);
    expect(await complete(['--data-dir', dir, '--agent', 'planner', 'handoff', 'mint', 'plan-'], CRUX)).toEqual(expect.arrayContaining(['plan-7']));
    expect(await complete(['--data-dir', dir, 'case', 'show', ''], CRUX)).toEqual([caseId]);
    expect(await complete(['--data-dir', dir, 'case', 'delete', 'c_'], CRUX)).toEqual([caseId]);
    expect(await complete(['--data-dir', dir, 'handoff', 'export', ''], CRUX)).toEqual([minted.handoff_id]);
    expect(data(), 'completion wrote nothing').toEqual(before);
    // A data directory that does not exist offers nothing and is not created.
    const none = freshDataDir();
    expect(await complete(['--data-dir', none, 'session', 'get', ''], CRUX)).toEqual([]);
    expect(fs.existsSync(none)).toBe(false);
  });

  it("help <Tab> names the visible commands (not __complete); help session <Tab> names session's commands", async () => {
    const top = await complete(['help', '']);
    expect(top).toEqual(expect.arrayContaining(['session', 'case', 'handoff', 'journal']));
    expect(top).not.toContain('__complete');
    const session = await complete(['help', 'session', '']);
    expect(session).toEqual(expect.arrayContaining(['put', 'get', 'list', 'history']));
    expect(session).not.toContain('case');
    expect(session).not.toContain('help');
    expect(await complete(['session', 'help', 'g'])).toEqual(['get']);
  });

  it("offers ids for the first argument only; bash's split --data-dir=/p is followed", async () => {
    const dir = freshDataDir();
    await crux(dir, ['session', 'put', 'build-42', '{}']);
    expect(await complete(['--data-dir', dir, 'session', 'put', 'build-42', ''], CRUX)).toEqual([]);
    expect(await complete(['--data-dir', dir, 'session', 'put', 'b'], CRUX)).toEqual(['build-42']);
    // bash splits `--data-dir=/p` into three words (= is a word break): the value is followed, and completed.
    expect(await complete(['--data-dir', '=', dir, 'session', 'get', 'b'], CRUX)).toEqual(['build-42']);
    expect(await complete(['session', 'get', '--data-dir', '=', dir, ''], CRUX)).toEqual(['build-42']);
    const parent = join(dir, '..');
    expect(await complete(['--data-dir', '=', join(parent, 'da')])).toEqual([dir]);
    // The cursor right after the =: the directories here (the tests run at the repository's root).
    expect(await complete(['--data-dir', '='])).toContain('src');
  });

  it('__complete reads the ids of its scope that start with the prefix, in order, at most 200, with or without the cache', async () => {
    const dir = freshDataDir();
    const file = join(tempDir(), 'many.jsonl');
    const line = (id: string) =>
      JSON.stringify({
        session_id: id,
        agent: null,
        status: 'active',
        created_at: '2026-12-01T10:00:00.000Z',
        updated_at: '2026-12-01T10:00:00.000Z',
        total_tokens: 0,
        expires_at: null,
        state: {},
      });
    fs.writeFileSync(file, [...Array.from({ length: 250 }, (_, i) => line(`job-${String(i).padStart(3, '0')}`)), line('other')].map((l) => `${l}\n`).join(''));
    expect((await crux(dir, ['session', 'import', file])).exitCode).toBe(0);
    const ids = (args: string[]) => crux(dir, ['__complete', 'session', ...args]).then((r) => r.stdout.split('\n').filter(Boolean));
    expect(await ids([])).toHaveLength(200);
    expect(await ids(['job-24'])).toEqual(Array.from({ length: 10 }, (_, i) => `job-24${i}`));
    expect(await ids(['oth'])).toEqual(['other']);
    expect(await ids(['nope'])).toEqual([]);
    // In id order, the first 200 of them.
    expect(await ids(['job-'])).toEqual(Array.from({ length: 200 }, (_, i) => `job-${String(i).padStart(3, '0')}`));
    // Each scope its own: another agent's job-2xx is offered to that agent only.
    for (const id of ['job-2a', 'job-2b', 'plan-1']) expect((await crux(dir, ['--agent', 'planner', 'session', 'put', id, '{}'])).exitCode).toBe(0);
    expect(await ids(['job-2'])).toEqual(Array.from({ length: 50 }, (_, i) => `job-2${String(i).padStart(2, '0')}`));
    expect(await crux(dir, ['--agent', 'planner', '__complete', 'session', 'job']).then((r) => r.stdout)).toBe('job-2a\njob-2b\n');
    expect(await crux(dir, ['--agent', 'planner', '__complete', 'session']).then((r) => r.stdout)).toBe('job-2a\njob-2b\nplan-1\n');
    // The same answers from the journal alone: without cache/, and with cache/ unusable (a file in its place).
    const want = await Promise.all([[], ['job-1'], ['o']].map(ids));
    fs.rmSync(join(dir, 'cache'), { recursive: true });
    expect(await Promise.all([[], ['job-1'], ['o']].map(ids))).toEqual(want);
    fs.rmSync(join(dir, 'cache'), { recursive: true });
    fs.writeFileSync(join(dir, 'cache'), 'not a directory');
    expect(await Promise.all([[], ['job-1'], ['o']].map(ids))).toEqual(want);
  });

  it('refuses an unknown shell with exit 2', async () => {
    const run = await crux(freshDataDir(), ['completion', 'fish']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('bash, zsh');
  });
});
