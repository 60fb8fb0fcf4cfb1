import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeEachStore, freshDataDir, freshStore, journalRecords, snapshotDir, tempDir } from '../helpers/cli';
// In-process: what these commands answer, not the process (test/helpers/run-cli.ts).
import { crux } from '../helpers/run-cli';

const NOW = ['--now', '2026-11-29T21:00:00Z'];
const CASE_KEYS = ['case_id', 'task', 'context', 'action', 'outcome', 'success', 'reward', 'tags', 'source_receipt', 'created_at', 'times_reused'];

async function record(dir: string, ...args: string[]): Promise<string> {
  const run = await crux(dir, ['case', 'record', ...args]);
  expect(run.exitCode, run.stderr).toBe(0);
  return run.stdout.trim();
}

async function json(dir: string, args: string[]): Promise<any> {
  const run = await crux(dir, ['--json', ...args]);
  expect(run.exitCode, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

/** Runs a command that must fail with `code` and leave the data directory exactly as it was. */
async function refused(dir: string, args: string[], code: number, opts: { input?: string } = {}): Promise<string> {
  const before = snapshotDir(dir);
  const run = await crux(dir, args, opts);
  expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/^crux: .+\n$/);
  expect(snapshotDir(dir)).toEqual(before);
  return run.stderr;
}

describe('crux case record / show', () => {
  it('records from flags, prints the id, and shows every field', async () => {
    const dir = freshDataDir();
    const id = await record(
      dir,
      ...NOW,
      '--task',
      'Rotate the TLS cert',
      '--action',
      'certbot renew',
      '--outcome',
      'renewed',
      '--context',
      'prod web',
      '--reward',
      '0.75',
      '--tag',
      'tls',
      '--tag',
      'ops',
      '--receipt',
      'run-17',
    );
    expect(id).toMatch(/^c_[0-9a-f]{24}$/);
    const { case: c } = await json(dir, ['case', 'show', id]);
    expect(Object.keys(c)).toEqual(CASE_KEYS);
    expect(c).toEqual({
      case_id: id,
      task: 'Rotate the TLS cert',
      context: 'prod web',
      action: 'certbot renew',
      outcome: 'renewed',
      success: true,
      reward: 0.75,
      tags: ['tls', 'ops'],
      source_receipt: 'run-17',
      created_at: '2026-11-29T21:00:00.000Z',
      times_reused: 0,
    });
    const human = await crux(dir, ['case', 'show', id]);
    expect(human.stdout).toContain('task:           Rotate the TLS cert');
  });

  it('defaults success and reward, marks --failure, clamps the reward, and answers --json with the case', async () => {
    const dir = freshDataDir();
    const { case: c } = await json(dir, ['case', 'record', '--task', 't1', '--action', 'a', '--outcome', 'o', '--failure', '--reward', '7']);
    expect(c).toMatchObject({ success: false, reward: 1, context: null, tags: [], source_receipt: null });
    const { case: d } = await json(dir, ['case', 'record', '--task', 't2', '--action', 'a', '--outcome', 'o', '--reward', '-1']);
    expect(d.reward).toBe(0);
    const { case: e } = await json(dir, ['case', 'record', '--task', 't3', '--action', 'a', '--outcome', 'o']);
    expect(e).toMatchObject({ success: true, reward: 1 });
  });

  it('records one JSON object from --stdin', async () => {
    const dir = freshDataDir();
    const input = JSON.stringify({ task: 'migrate db', action: 'run flyway', outcome: 'ok', success: false, reward: 0.5, tags: ['db'], source_receipt: 'r1' });
    const run = await crux(dir, ['--json', 'case', 'record', '--stdin'], { input });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).case).toMatchObject({ task: 'migrate db', success: false, reward: 0.5, tags: ['db'], source_receipt: 'r1' });
  });

  it('scrubs URL credentials before storing and showing', async () => {
    const dir = freshDataDir();
    const url = 'https://deploy:s3cr3t@git.example.com/repo';
    const id = await record(dir, '--task', `clone ${url}`, '--action', url, '--outcome', url, '--context', url);
    const { case: c } = await json(dir, ['case', 'show', id]);
    for (const field of ['task', 'action', 'outcome', 'context']) expect(c[field]).not.toContain('s3cr3t');
    expect(c.action).toBe('https://git.example.com/repo');
    expect(fs.readFileSync(join(dir, 'cases.jsonl'), 'utf8')).not.toContain('s3cr3t');
  });

  it('refuses bad input with exit 2 or 5 and writes nothing', async () => {
    const dir = freshDataDir();
    const good = ['--task', 't', '--action', 'a', '--outcome', 'o'];
    await refused(dir, ['case', 'record', '--task', 't', '--action', 'a'], 2);
    expect(fs.existsSync(dir)).toBe(false);
    await record(dir, ...good);
    await refused(dir, ['case', 'record', ...good, '--reward', 'lots'], 5);
    await refused(dir, ['case', 'record', '--task', '', '--action', 'a', '--outcome', 'o'], 5);
    expect(await refused(dir, ['case', 'record', ...good, '--context', 'x'.repeat(65 * 1024)], 5)).toMatch(/over the limit of 65536 bytes/);
    await refused(dir, ['case', 'record', '--stdin'], 5, { input: '{"task":' });
    await refused(dir, ['case', 'record', '--stdin'], 5, { input: '{"task":"t","action":"a","outcome":"o","colour":"red"}' });
    await refused(dir, ['case', 'record', '--stdin', '--task', 't'], 2, { input: '{}' });
    await refused(dir, ['case', 'record', ...good, '--bogus'], 2);
  });

  it('answers a missing case with 3 and a malformed id with 5', async () => {
    const dir = freshDataDir();
    await refused(dir, ['case', 'show', 'c_nope'], 3);
    await record(dir, '--task', 't', '--action', 'a', '--outcome', 'o');
    await refused(dir, ['case', 'show', 'c_nope'], 3);
    await refused(dir, ['case', 'show', 'a::b'], 5);
  });
});

describeEachStore('on a %s store', (kind) => {
  const freshDataDir = () => freshStore(kind);

  describe('crux case retrieve', () => {
    async function bank(): Promise<{ dir: string; ids: Record<string, string> }> {
      const dir = freshDataDir();
      const ids: Record<string, string> = {};
      const add = async (name: string, now: string, ...args: string[]) => {
        ids[name] = await record(dir, '--now', now, '--action', `act ${name}`, '--outcome', `outcome ${name}`, ...args);
      };
      await add('long', '2026-01-01T00:00:00Z', '--task', 'restart the nginx server');
      await add('old', '2026-01-01T00:00:00Z', '--task', 'restart nginx', '--reward', '0.5');
      await add('new', '2026-01-02T00:00:00Z', '--task', 'Nginx: restart!', '--reward', '0.5');
      await add('failed', '2026-01-01T00:00:00Z', '--task', 'restart nginx', '--failure');
      await add('kernel', '2026-01-01T00:00:00Z', '--task', 'compile the kernel');
      await add('tagged', '2026-01-01T00:00:00Z', '--task', 'reload web server config', '--tag', 'nginx');
      return { dir, ids };
    }

    it('ranks by similarity, reward, newest, and returns {results:[{similarity, case}]}', async () => {
      const { dir, ids } = await bank();
      const { results } = await json(dir, ['case', 'retrieve', 'restart', 'nginx', '--top-k', '10']);
      expect(results.map((r: any) => [r.case.case_id, r.similarity])).toEqual([
        [ids.failed, 1],
        [ids.new, 1],
        [ids.old, 1],
        [ids.long, 0.5],
        [ids.tagged, 1 / 6],
      ]);
      expect(Object.keys(results[0].case)).toEqual(CASE_KEYS);
      const limited = await json(dir, ['case', 'retrieve', 'restart', 'nginx', '--limit', '2']);
      expect(limited.results.map((r: any) => r.case.case_id)).toEqual([ids.failed, ids.new]);
    });

    it('retrieves a case recorded in Hindi by its word (Alphabetic runs keep the vowel signs)', async () => {
      const dir = freshDataDir();
      const id = await record(dir, ...NOW, '--task', 'मेरी किताब खोजो', '--action', 'shelf 3', '--outcome', 'found');
      await record(dir, ...NOW, '--task', 'find my book', '--action', 'shelf 4', '--outcome', 'found');
      for (let round = 0; round < 2; round++) {
        // the second round answers from the cached bank
        const { results } = await json(dir, ['case', 'retrieve', 'किताब']);
        expect(results.map((r: any) => [r.case.case_id, r.similarity])).toEqual([[id, 1 / 3]]);
      }
      const table = await crux(dir, ['case', 'retrieve', 'किताब', 'खोजो']);
      expect(table.exitCode).toBe(0);
      expect(table.stdout).toContain('मेरी किताब खोजो');
    });

    it('applies --top-k (default 5, capped at 100), --only-success and --min-similarity', async () => {
      const { dir, ids } = await bank();
      const names = async (...args: string[]) => (await json(dir, ['case', 'retrieve', 'restart', 'nginx', ...args])).results.map((r: any) => r.case.case_id);
      expect(await names()).toHaveLength(5);
      expect(await names('--top-k', '2')).toEqual([ids.failed, ids.new]);
      expect(await names('--top-k', '500')).toHaveLength(5);
      expect(await names('--top-k', '0')).toEqual([]);
      expect(await names('--only-success')).toEqual([ids.new, ids.old, ids.long, ids.tagged]);
      expect(await names('--min-similarity', '0.5')).toEqual([ids.failed, ids.new, ids.old, ids.long]);
      expect(await names('--min-similarity', '1', '--only-success')).toEqual([ids.new, ids.old]);
      const none = await json(dir, ['case', 'retrieve', 'quantum', 'chromodynamics']);
      expect(none).toEqual({ results: [] });
    });

    it('prints a table with similarity, task, outcome, success, reward and reuse', async () => {
      const { dir } = await bank();
      const run = await crux(dir, ['case', 'retrieve', 'compile', 'kernel']);
      expect(run.exitCode).toBe(0);
      for (const word of ['similarity', 'task', 'outcome', 'success', 'reward', 'reused', '0.667', 'compile the kernel', 'outcome kernel']) {
        expect(run.stdout).toContain(word);
      }
      expect(run.stdout).not.toMatch(/\x1b\[/);
      expect((await crux(dir, ['case', 'retrieve', 'zzz'])).stdout).toBe('no matching cases\n');
    });

    it('refuses bad options with 5 (or 2) and changes nothing', async () => {
      const { dir } = await bank();
      await refused(dir, ['case', 'retrieve', 'nginx', '--top-k', '-1'], 5);
      await refused(dir, ['case', 'retrieve', 'nginx', '--top-k', 'ten'], 5);
      await refused(dir, ['case', 'retrieve', 'nginx', '--min-similarity', '1.5'], 5);
      await refused(dir, ['case', 'retrieve', 'nginx', '--min-similarity', 'x', '--mark-reused'], 5);
      await refused(dir, ['case', 'retrieve'], 2);
    });

    it('journals reuse with --mark-reused; a plain retrieve changes nothing', async () => {
      const { dir, ids } = await bank();
      const before = snapshotDir(dir);
      await json(dir, ['case', 'retrieve', 'kernel']);
      expect(snapshotDir(dir)).toEqual(before);
      const marked = await json(dir, ['case', 'retrieve', 'compile', 'kernel', '--mark-reused']);
      expect(marked.results[0].case).toMatchObject({ case_id: ids.kernel, times_reused: 1 });
      await json(dir, ['case', 'retrieve', 'kernel', '--mark-reused']);
      expect((await json(dir, ['case', 'show', ids.kernel!])).case.times_reused).toBe(2);
      expect((await json(dir, ['case', 'show', ids.long!])).case.times_reused).toBe(0);
      const events = journalRecords(dir, 'cases.jsonl');
      expect(events.filter((e) => e.ev === 'case.reused').map((e) => e.data)).toEqual([
        { case_id: ids.kernel, times_reused: 1 },
        { case_id: ids.kernel, times_reused: 2 },
      ]);
      const table = await crux(dir, ['case', 'list']);
      // Piped: tab-separated, the reward and reuse count in their own fields.
      expect(table.stdout).toMatch(/\tcompile the kernel\tyes\t1\t2\n/);
    });
  });
});

describe('crux case list / delete', () => {
  it('lists nothing from a missing data directory without creating it', async () => {
    const dir = freshDataDir();
    expect(await json(dir, ['case', 'list'])).toEqual({ cases: [] });
    expect((await crux(dir, ['case', 'list'])).stdout).toBe('no cases\n');
    expect(await json(dir, ['case', 'retrieve', 'anything'])).toEqual({ results: [] });
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('lists cases newest first (--sort created: oldest first), and deletes with --yes only', async () => {
    const dir = freshDataDir();
    const a = await record(dir, '--task', 'first', '--action', 'a', '--outcome', 'o');
    const b = await record(dir, '--task', 'second', '--action', 'a', '--outcome', 'o');
    expect((await json(dir, ['case', 'list'])).cases.map((c: any) => c.case_id)).toEqual([b, a]);
    expect((await json(dir, ['case', 'list', '--sort', 'created'])).cases.map((c: any) => c.case_id)).toEqual([a, b]);
    expect((await crux(dir, ['--quiet', 'case', 'list'])).stdout).toBe(`${b}\n${a}\n`);
    expect(await refused(dir, ['case', 'delete', a], 2)).toContain('--yes');
    await refused(dir, ['case', 'delete', 'c_missing', '--yes'], 3);
    expect(await json(dir, ['case', 'delete', a, '--yes'])).toEqual({ deleted: a });
    await refused(dir, ['case', 'show', a], 3);
    await refused(dir, ['case', 'delete', a, '--yes'], 3);
    expect((await json(dir, ['case', 'list'])).cases.map((c: any) => c.case_id)).toEqual([b]);
    expect((await crux(dir, ['case', 'delete', b, '--yes'])).stdout).toBe(`deleted case ${b}\n`);
    expect(await json(dir, ['case', 'retrieve', 'second'])).toEqual({ results: [] });
  });
});

describe('crux case export / import', () => {
  it('round-trips every field through JSON Lines', async () => {
    const a = freshDataDir();
    const id = await record(
      a,
      ...NOW,
      '--task',
      'Ünïcödé 東京 task',
      '--action',
      'line one\nline two',
      '--outcome',
      'o',
      '--tag',
      'x1',
      '--failure',
      '--reward',
      '0.3',
    );
    await record(a, '--task', 'second', '--action', 'a', '--outcome', 'o');
    await json(a, ['case', 'retrieve', '東京', '--mark-reused']);
    const exported = await crux(a, ['case', 'export']);
    expect(exported.exitCode).toBe(0);
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ case_id: id, times_reused: 1, success: false, reward: 0.3, action: 'line one\nline two' });
    expect(await json(a, ['case', 'export'])).toEqual({ cases: lines });

    const b = freshDataDir();
    const imported = await crux(b, ['--json', 'case', 'import', '-'], { input: exported.stdout });
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toEqual({ imported: 2, created: 2, replaced: 0 });
    expect((await crux(b, ['case', 'export'])).stdout).toBe(exported.stdout);
    // Importing the same backup again replaces, it does not duplicate.
    const file = join(tempDir(), 'backup.jsonl');
    fs.writeFileSync(file, exported.stdout);
    expect((await crux(b, ['case', 'import', file])).stdout).toBe('imported 2 cases (0 new, 2 replaced)\n');
    expect((await crux(b, ['case', 'export'])).stdout).toBe(exported.stdout);
  });

  it('gives a case without case_id a new id and the current time', async () => {
    const dir = freshDataDir();
    const run = await crux(dir, [...NOW, 'case', 'import'], { input: '{"task":"t","action":"a","outcome":"o"}\n\n' });
    expect(run.exitCode, run.stderr).toBe(0);
    const [c] = (await json(dir, ['case', 'list'])).cases;
    expect(c).toMatchObject({ task: 't', success: true, reward: 1, times_reused: 0, created_at: '2026-11-29T21:00:00.000Z' });
    expect(c.case_id).toMatch(/^c_[0-9a-f]{24}$/);
  });

  it('refuses the whole import at the first bad line, naming it, and writes nothing', async () => {
    const dir = freshDataDir();
    const ok = '{"task":"t","action":"a","outcome":"o"}';
    await refused(dir, ['case', 'import'], 5, { input: `${ok}\n${ok}\n{"task":"t","action":"a"}\n${ok}\n` });
    expect(fs.existsSync(dir)).toBe(false);
    await record(dir, '--task', 't', '--action', 'a', '--outcome', 'o');
    expect(await refused(dir, ['case', 'import'], 5, { input: `${ok}\nnot json\n` })).toMatch(/^crux: line 2: not valid JSON/);
    expect(await refused(dir, ['case', 'import'], 5, { input: `${ok}\n{"task":"t","action":"a","outcome":"o","reward":"x"}\n` })).toMatch(
      /^crux: line 2: reward/,
    );
    await refused(dir, ['case', 'import', join(tempDir(), 'missing.jsonl')], 5);
  });

  it('imports thousands of cases in one append', async () => {
    const dir = freshDataDir();
    const n = 5000;
    const id = (i: number) => `c_${String(i).padStart(5, '0')}`;
    const input = Array.from({ length: n }, (_, i) =>
      JSON.stringify({ case_id: id(i), task: `task ${i} deploy w${i % 97}`, action: 'a', outcome: 'o', reward: (i % 10) / 10 }),
    ).join('\n');
    const run = await crux(dir, ['--json', 'case', 'import'], { input });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).imported).toBe(n);
    expect(fs.readFileSync(join(dir, 'cases.jsonl'), 'utf8').split('\n')).toHaveLength(n + 1);
    // {w13, deploy} vs {task, <i>, deploy, w13}: 2/4 for every i ≡ 13 (mod 97); the best reward 0.9 needs
    // i ≡ 9 (mod 10): 789, 1759, 2729, 3699, 4669 — all created at once, so the lowest ids win.
    const { results } = await json(dir, ['case', 'retrieve', 'w13', 'deploy', '--top-k', '3']);
    expect(results.map((r: any) => [r.case.case_id, r.similarity, r.case.reward])).toEqual([
      [id(789), 0.5, 0.9],
      [id(1759), 0.5, 0.9],
      [id(2729), 0.5, 0.9],
    ]);
  });
});

describe('crux case and the journal', () => {
  it('keeps every case, reuse count and the order through compaction', async () => {
    const dir = freshDataDir();
    for (const task of ['deploy one', 'deploy two', 'deploy three']) await record(dir, '--task', task, '--action', 'a', '--outcome', 'o');
    const gone = await record(dir, '--task', 'deploy gone', '--action', 'a', '--outcome', 'o');
    await json(dir, ['case', 'retrieve', 'deploy', 'two', '--mark-reused', '--top-k', '1']);
    await json(dir, ['case', 'delete', gone, '--yes']);
    const before = (await crux(dir, ['case', 'export'])).stdout;
    expect((await crux(dir, ['journal', 'compact'])).exitCode).toBe(0);
    expect((await crux(dir, ['case', 'export'])).stdout).toBe(before);
    expect(fs.readFileSync(join(dir, 'cases.jsonl'), 'utf8').trim().split('\n')).toHaveLength(4); // snapshot + 3 cases
    expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(0);
  });

  it('reports a damaged line on stderr and still answers from the rest', async () => {
    const dir = freshDataDir();
    const first = await record(dir, '--task', 'alpha task', '--action', 'a', '--outcome', 'o');
    await record(dir, '--task', 'beta task', '--action', 'a', '--outcome', 'o');
    const path = join(dir, 'cases.jsonl');
    fs.writeFileSync(path, fs.readFileSync(path, 'utf8').replace('alpha task', 'alpha tusk'));
    const run = await crux(dir, ['--json', 'case', 'retrieve', 'task']);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout).results.map((r: any) => r.case.task)).toEqual(['beta task']);
    expect(run.stderr).toMatch(/cases\.jsonl:1: hash mismatch/);
    expect((await crux(dir, ['case', 'show', first])).exitCode).toBe(3);
    expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(9);
  });
});
