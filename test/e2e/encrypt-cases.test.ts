// Cases on an encrypted data directory (SPEC §13), through the built bin/crux: the same cases imported into a plain
// store and into an encrypted one rank every query exactly alike (the encrypted store's word index holds keyed
// hashes), no task word lies in any file of the encrypted store (tags, plain by the contract, aside), and what shows
// a case needs the key (6 naming its id). Also after `journal encrypt`, `rekey` and `decrypt` of a plain store.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir, tempDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { expectRefusal, startMcp } from '../helpers/mcp';

async function newKey(): Promise<{ file: string; id: string }> {
  const file = join(tempDir(), 'store.key');
  const r = await crux(freshDataDir(), ['key', 'new', '--out', file]);
  expect(r.exitCode, r.stderr).toBe(0);
  return { file, id: r.stdout.trim() };
}

/** Every file under `dir`, as text. */
function everyFile(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) out.set(join(entry.parentPath, entry.name), fs.readFileSync(join(entry.parentPath, entry.name), 'latin1'));
  }
  return out;
}

// Words of the tasks: a common one (every case), some shared by many, rare ones, a word in Devanagari, mixed case.
const COMMON = 'xylocommon';
const SHARED = ['alphaword', 'betaword', 'gammaword', 'deltaword', 'epsiword'];
const RARE = ['rareone', 'raretwo', 'किताबशब्द'];

/** 60 cases with ties in similarity and reward (so that created_at and case_id break them), as import lines. */
function cases(): string {
  const lines: string[] = [];
  for (let i = 0; i < 60; i++) {
    const words = [COMMON, ...SHARED.filter((_, k) => (i + k) % (k + 2) === 0)];
    if (i % 17 === 3) words.push(RARE[i % 3]!);
    if (i % 5 === 0) words.push(`Solo${i}`);
    lines.push(
      JSON.stringify({
        case_id: `c_${String(i).padStart(3, '0')}`,
        task: words.join(i % 2 === 0 ? ' ' : ', '),
        action: `actionsecret${i}`,
        outcome: `outcomesecret${i}`,
        context: i % 3 === 0 ? `contextsecret${i}` : null,
        success: i % 7 !== 0,
        reward: [1, 0.5, 0.25][i % 3],
        tags: i % 4 === 0 ? ['tagplain', `tag${i % 8}`] : [],
        created_at: new Date(Date.UTC(2026, 0, 1 + (i % 9))).toISOString(),
      }),
    );
  }
  return `${lines.join('\n')}\n`;
}

const QUERIES: string[][] = [
  [COMMON],
  [COMMON, 'alphaword'],
  ['alphaword', 'betaword', 'gammaword'],
  ['deltaword', 'epsiword', 'nowhereword'],
  ['RAREONE'],
  ['किताबशब्द', COMMON],
  ['solo10', 'tagplain'],
  ['tag4'],
  ['nowhereword', 'neitherword'],
  ['x'],
];

async function ranking(dir: string, query: string[], key: string[], extra: string[] = []): Promise<string> {
  const r = await crux(dir, [...key, '--json', 'case', 'retrieve', ...query, '--top-k', '100', ...extra]);
  expect(r.exitCode, `${query.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

describe('case retrieve on an encrypted data directory', () => {
  it('ranks every query exactly as a plain store does, with no task word in any file; showing a case needs the key', async () => {
    const plain = freshDataDir();
    const sealed = freshDataDir();
    const { file, id } = await newKey();
    const key = ['--key-file', file];
    expect((await crux(plain, ['case', 'import', '-'], { input: cases() })).exitCode).toBe(0);
    const imported = await crux(sealed, [...key, 'case', 'import', '-'], { input: cases() });
    expect(imported.exitCode, imported.stderr).toBe(0);

    let matched = 0;
    for (const query of QUERIES) {
      const expected = await ranking(plain, query, []);
      matched += JSON.parse(expected).results.length;
      expect(await ranking(sealed, query, key), query.join(' ')).toBe(expected);
      expect(await ranking(sealed, query, key, ['--only-success', '--min-similarity', '0.3']), query.join(' ')).toBe(
        await ranking(plain, query, [], ['--only-success', '--min-similarity', '0.3']),
      );
    }
    // The queries do match (a no-match on both stores would prove nothing).
    expect(matched).toBeGreaterThan(60);
    expect(JSON.parse(await ranking(plain, ['nowhereword'], []))).toEqual(JSON.parse(await ranking(sealed, ['nowhereword'], key)));

    // No word of a task, and no action, outcome or context, lies in any file (tags stay plain, SPEC §13).
    const words = [COMMON, ...SHARED, ...RARE, 'solo10', 'actionsecret1', 'outcomesecret2', 'contextsecret3'];
    for (const [path, text] of everyFile(sealed)) {
      for (const word of words) expect(text.toLowerCase(), `${word} in ${path}`).not.toContain(word.toLowerCase());
      if (path.includes(`${join('data', 'cache')}`)) expect(text, path).not.toContain('tagplain');
    }

    // Without the key, or with another: 6 naming the key id, for every command that shows a case.
    const other = await newKey();
    for (const args of [
      ['case', 'retrieve', COMMON],
      ['case', 'list'],
      ['case', 'show', 'c_001'],
      ['case', 'export'],
      ['case', 'list', '--tag', 'tagplain'],
    ]) {
      for (const given of [[], ['--key-file', other.file]]) {
        const r = await crux(sealed, [...given, ...args]);
        expect(r.exitCode, args.join(' ')).toBe(6);
        expect(r.stderr).toContain(id);
      }
    }
    // With it, the text as recorded; export gives back exactly what a plain store exports.
    expect(JSON.parse((await crux(sealed, [...key, '--json', 'case', 'show', 'c_003'])).stdout).case).toMatchObject({
      action: 'actionsecret3',
      context: 'contextsecret3',
    });
    expect((await crux(sealed, [...key, 'case', 'export'])).stdout).toBe((await crux(plain, ['case', 'export'])).stdout);
    // A list by tag finds the tag's words by their hashes.
    const byTag = ['--json', 'case', 'list', '--tag', 'tag4'];
    expect((await crux(sealed, [...key, ...byTag])).stdout).toBe((await crux(plain, byTag)).stdout);
    // cache/ lost: the bank is rebuilt from the journal's hashes, without the key, and ranks the same.
    fs.rmSync(join(sealed, 'cache'), { recursive: true });
    expect((await crux(sealed, ['journal', 'check'])).exitCode).toBe(0);
    expect(await ranking(sealed, [COMMON, 'betaword'], key)).toBe(await ranking(plain, [COMMON, 'betaword'], []));
    // Compaction and check need no key, and the ranking is the same after them.
    expect((await crux(sealed, ['journal', 'compact'])).exitCode).toBe(0);
    expect((await crux(sealed, ['journal', 'check'])).exitCode).toBe(0);
    expect(await ranking(sealed, [COMMON, 'alphaword'], key)).toBe(await ranking(plain, [COMMON, 'alphaword'], []));
  });

  it('journal encrypt, rekey and decrypt carry the cases: the same rankings, and no case text or word in any file once encrypted', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['case', 'import', '-'], { input: cases() })).exitCode).toBe(0);
    const before = await Promise.all(QUERIES.map((q) => ranking(dir, q, [])));
    const key = await newKey();
    const next = await newKey();
    expect((await crux(dir, ['--key-file', key.file, 'journal', 'encrypt'])).exitCode).toBe(0);
    const words = [COMMON, ...SHARED, 'solo10', 'actionsecret1', 'outcomesecret2', 'contextsecret3'];
    for (const [path, text] of everyFile(dir)) for (const word of words) expect(text, `${word} in ${path}`).not.toContain(word);
    for (const [i, q] of QUERIES.entries()) expect(await ranking(dir, q, ['--key-file', key.file])).toBe(before[i]);
    expect((await crux(dir, ['--key-file', key.file, 'journal', 'rekey', '--new-key-file', next.file])).exitCode).toBe(0);
    for (const [i, q] of QUERIES.entries()) expect(await ranking(dir, q, ['--key-file', next.file])).toBe(before[i]);
    expect((await crux(dir, ['--key-file', key.file, 'case', 'retrieve', COMMON])).exitCode).toBe(6);
    expect((await crux(dir, ['--key-file', next.file, 'journal', 'decrypt'])).exitCode).toBe(0);
    expect(fs.readFileSync(join(dir, 'cases.jsonl'), 'utf8')).not.toContain('terms_hmac');
    for (const [i, q] of QUERIES.entries()) expect(await ranking(dir, q, [])).toBe(before[i]);
    expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(0);
  });
});

describe('crux mcp on an encrypted data directory', () => {
  it('case_record seals and case_retrieve ranks with CRUX_KEY_FILE; without it case_retrieve is refused (6) naming the key id', async () => {
    const dir = freshDataDir();
    const { file, id } = await newKey();
    const s = await startMcp(dir, [], { env: { CRUX_KEY_FILE: file } });
    try {
      await s.call('case_record', { task: 'fix the flaky wombatlogin test', action: 'pinned the clock', outcome: 'green quokkaruns' });
      await s.call('case_record', { task: 'fix the wombatlogin page', action: 'escaped the URL', outcome: 'still open', success: false });
      const found = await s.call('case_retrieve', { task: 'fix flaky wombatlogin test' });
      expect(found.content[0].text).toContain('action: pinned the clock');
      expect(found.structuredContent).toEqual(
        JSON.parse((await crux(dir, ['--key-file', file, '--json', 'case', 'retrieve', 'fix', 'flaky', 'wombatlogin', 'test'])).stdout),
      );
    } finally {
      await s.close();
    }
    for (const [path, text] of everyFile(dir)) for (const word of ['wombatlogin', 'quokkaruns', 'pinned']) expect(text, path).not.toContain(word);
    const locked = await startMcp(dir);
    try {
      const refusal = expectRefusal(await locked.call('case_retrieve', { task: 'fix flaky wombatlogin test' }), 6);
      expect(refusal.message).toContain(id);
    } finally {
      await locked.close();
    }
  });
});
