// The streaming rebuild of a lost index (derived/rebuild.ts): run sorts spill and merge stably, and after
// cache/ is lost the first read's answer, every later answer and the rebuilt base itself are a replay's and
// the base a replay would have built — over windows that close mid-entity, batches, damage in the middle, a
// torn tail (a batch without its last record) and a writer appending while a reader rebuilds.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { ENTRY_WORDS, EntryList } from '../../../src/journal/derived/entries';
import { indexName, openManifest, openRun } from '../../../src/journal/derived/index-base';
import { SpillFailed, SpillSort } from '../../../src/journal/derived/spill';
import { fs as cruxFs } from '../../../src/shared/fs';
import type { Reporter } from '../../../src/journal/dir/load';
import * as sessions from '../../../src/domain/session/store';
import { listNewest } from '../../../src/domain/session/newest-list';
import { SESSION_STORE, type Sessions } from '../../../src/domain/session/fold';
import { unscopeSessionId, type AgentName, type LogicalSessionId, type ScopedSessionId } from '../../../src/shared/ids';
import { CRUX, FULL, tempDir, testEnv } from '../../helpers/cli';

const START = Date.parse('2026-12-01T00:00:00Z');
const HOUR = 3_600_000;

/** A reporter that keeps what it is told. */
function collecting(): Reporter & { told: string[] } {
  const told: string[] = [];
  return { told, warn: (m) => void told.push(m), damage: (file, line, reason) => void told.push(`damage ${file}:${line}: ${reason}`) };
}

const scope = (dir: DataDir, agent: string | undefined, now: number) => ({ dir, agent: agent as AgentName | undefined, now });

let seed: Promise<string> | undefined;

/**
 * A journal whose entities span many windows (CRUX_TEST_REBUILD_ENTRIES makes them a few KiB): imports as
 * batches, puts, touches, closes and deletes of the same sessions far apart, for three scopes. Built once for the
 * file (about 550 writes) and copied for each test, opened by a DataDir of its own as a new process would.
 */
async function seeded(): Promise<DataDir> {
  seed ??= build();
  const root = join(tempDir(), 'data');
  fs.cpSync(await seed, root, { recursive: true, preserveTimestamps: true });
  return new DataDir(root, collecting(), 5_000);
}

async function build(): Promise<string> {
  const dir = new DataDir(join(tempDir(), 'seed'), collecting(), 5_000);
  let now = START;
  const lines = Array.from({ length: 300 }, (_, i) =>
    JSON.stringify({
      session_id: `imp${i}`,
      state: { i },
      ...(i % 3 === 0 ? { status: 'closed' } : {}),
      updated_at: new Date(START - i * 60_000).toISOString(),
    }),
  );
  await sessions.importSessions(scope(dir, undefined, now), Buffer.from(`${lines.join('\n')}\n`), { maxStateBytes: 1 << 20 });
  for (let round = 0; round < 6; round++) {
    for (let i = 0; i < 40; i++) {
      now += 61_000;
      const agent = [undefined, 'a', 'b'][i % 3];
      const id = `s${(i * 7 + round) % 50}` as LogicalSessionId;
      const s = scope(dir, agent, now);
      if ((i + round) % 9 === 4) await sessions.closeSession(s, id, { outcome: 'completed' }).catch(() => undefined);
      else if ((i + round) % 13 === 5) await sessions.deleteSession(s, id).catch(() => undefined);
      else if ((i + round) % 5 === 2) await sessions.touchSession(s, id).catch(() => undefined);
      else
        await sessions.putSession(s, id, { state: `{"r":${round},"i":${i}}`, ...(i % 2 === 0 ? { ttlMs: (1 + (i % 4)) * HOUR } : {}) }).catch(() => undefined);
    }
    // The imported sessions change again long after their batch: closed one by one, in another window.
    await sessions.closeSession(scope(dir, undefined, now), `imp${round * 10 + 1}` as LogicalSessionId, { outcome: 'failed' });
  }
  return dir.root;
}

const journal = (dir: DataDir) => join(dir.root, SESSION_STORE.file);
const dropCache = (dir: DataDir) => fs.rmSync(join(dir.root, 'cache'), { recursive: true, force: true });
/** The index's files only, one by one (a writer in another process may be adding one meanwhile). */
function dropIndex(dir: DataDir): void {
  let names: string[] = [];
  try {
    names = fs.readdirSync(join(dir.root, 'cache'));
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(indexName(SESSION_STORE.file))) fs.rmSync(join(dir.root, 'cache', name), { force: true });
}
const replay = (dir: DataDir) => dir.replay(SESSION_STORE, { quiet: true }).state;
const now = () => START + 400 * 61_000;

/** Every entry of the base the manifest names, in sort order (the partitions concatenated). */
function baseEntries(dir: DataDir): number[][] {
  const manifest = openManifest(dir.root, SESSION_STORE);
  expect(manifest).toBeDefined();
  expect(manifest!.frozen).toEqual([]);
  const out: number[][] = [];
  for (const ref of manifest!.parts) {
    const run = openRun(dir.root, SESSION_STORE.file, ref)!;
    try {
      run.table.eachPage((w) => {
        for (let i = 0; i < w.length / ENTRY_WORDS; i++) out.push(Array.from(w.subarray(i * ENTRY_WORDS, (i + 1) * ENTRY_WORDS)));
      });
    } finally {
      fs.closeSync(run.fd);
    }
  }
  return out;
}

const ids = (state: Sessions, keep: (r: NonNullable<ReturnType<Sessions['get']>>) => boolean) =>
  [...state.values()]
    .filter(keep)
    .map((r) => r.key)
    .sort();

/** Every answer read through the index (by key, each secondary key, newest first) against a replay's. */
async function expectReplayAnswers(dir: DataDir): Promise<void> {
  const truth = replay(dir);
  for (const key of [...truth.keys()].slice(0, 40).concat(['nope' as ScopedSessionId])) {
    expect((await dir.readKey(SESSION_STORE, key)).get(key as never)).toEqual(truth.get(key as never));
  }
  for (const agent of ['a', 'b', 'zz']) {
    const got = await dir.readIndexed(SESSION_STORE, { index: 'agent', equals: agent });
    const own = (r: { key: ScopedSessionId }) => unscopeSessionId(r.key).agent === agent;
    expect(ids(got, own)).toEqual(ids(truth, own));
  }
  const open = (r: { status: string }) => r.status !== 'closed' && r.status !== 'expired';
  const cut = START + 200 * 61_000;
  const stranded = await dir.readIndexed(SESSION_STORE, { index: 'strandable_updated', atMost: cut });
  const strandable = (r: { status: string; updated_at: string | null }) => open(r) && r.status !== 'archived' && Date.parse(r.updated_at!) <= cut;
  expect(ids(stranded, strandable)).toEqual(ids(truth, strandable));
  const due = await dir.readIndexed(SESSION_STORE, { index: 'open_expires', atMost: now() });
  const expires = (r: { expires_at: string | null }) => r.expires_at !== null && Date.parse(r.expires_at) <= now();
  expect(ids(due, (r) => open(r) && expires(r))).toEqual(ids(truth, (r) => open(r) && expires(r)));
  for (const allAgents of [false, true]) {
    const listed = await listNewest(scope(dir, undefined, now()), { all: false, archived: false, stranded: false, allAgents }, 7);
    expect(listed).toEqual(
      await listNewest(
        scope(new DataDir(replayOnly(dir), collecting(), 5_000), undefined, now()),
        { all: false, archived: false, stranded: false, allAgents },
        7,
      ),
    );
  }
}

/** A copy of the journal alone, whose cache/ cannot be written (a file stands in its place): answers come from replays. */
function replayOnly(dir: DataDir): string {
  const copy = join(tempDir(), 'replay');
  fs.mkdirSync(copy);
  fs.copyFileSync(journal(dir), join(copy, SESSION_STORE.file));
  fs.writeFileSync(join(copy, 'cache'), 'not a directory');
  return copy;
}

beforeEach(() => {
  process.env.CRUX_TEST_REBUILD_ENTRIES = '64';
});
afterEach(() => {
  delete process.env.CRUX_TEST_REBUILD_ENTRIES;
});

describe('spilled sorts', () => {
  it.each([4, 2] as const)('sort by the first %i words, stable, through spilled runs and the radix sort alike', (words) => {
    const root = tempDir();
    fs.mkdirSync(join(root, 'cache'));
    for (const [n, capacity] of [
      [5000, 700],
      [9000, 1 << 18],
      [300, 64],
    ] as const) {
      const all = new EntryList(n);
      const spill = new SpillSort(root, 'x.jsonl', words, capacity);
      for (let i = 0; i < n; i++) {
        // Few distinct keys (many ties), words of every width; word 4 numbers the entry. Word 2 falls as often as
        // it rises among equals in words 0–1: a sort by two words keeps them so, a sort by four reorders them.
        const w = [(i * 7919) % 5, (i * 104729) % 3 === 0 ? 0xffffffff : (i * 31) % 4, (n - i) % 3, (i * 13) % 7, i, 0, 0, 0] as const;
        all.push(...w);
        spill.push(...w);
      }
      const merged = spill.merged();
      const got: number[] = [];
      for (; !merged.done; merged.next()) got.push(merged.words[merged.index * ENTRY_WORDS + 4]!);
      spill.close();
      // A plain stable comparison sort by the same words is the reference.
      const by = (x: number, y: number) => {
        for (let k = 0; k < words; k++) {
          const d = all.words[x * ENTRY_WORDS + k]! - all.words[y * ENTRY_WORDS + k]!;
          if (d !== 0) return d;
        }
        return x - y;
      };
      const want = Array.from({ length: n }, (_, i) => i).sort(by);
      const sorted = all.sorted(words);
      expect(Array.from({ length: n }, (_, i) => sorted[i * ENTRY_WORDS + 4])).toEqual(want);
      // Spilled runs are merged by all four words: a sort by two is then in order of those two (all a rebuild
      // asks of it), and exactly the reference where nothing spilled.
      const keyOf = (i: number) => [all.words[i * ENTRY_WORDS], all.words[i * ENTRY_WORDS + 1]];
      if (words === 4 || capacity >= n) expect(got).toEqual(want);
      else expect(got.map(keyOf)).toEqual(want.map(keyOf));
      // Spilled runs are unlinked as soon as they are open: nothing is left in cache/.
      expect(fs.readdirSync(join(root, 'cache'))).toEqual([]);
    }
  });
});

/** Reads of an unlinked file (a spilled run's) come back with one bit flipped, from the `after`-th on. */
function flipScratchReads(after = 0) {
  const read = cruxFs.readSync;
  let seen = 0;
  return vi.spyOn(cruxFs, 'readSync').mockImplementation(((fd: number, buffer: Uint8Array, ...rest: never[]) => {
    const n = (read as (...a: unknown[]) => number)(fd, buffer, ...rest);
    let unlinked = false;
    try {
      unlinked = fs.readlinkSync(`/proc/self/fd/${fd}`).endsWith(' (deleted)');
    } catch {
      // Not a file of ours.
    }
    if (unlinked && n > 0 && seen++ >= after) buffer[n >> 1]! ^= 0x10;
    return n;
  }) as typeof fs.readSync);
}

describe('spilled runs that do not read back as written', () => {
  it('fail the sort (SpillFailed), whichever block it is', () => {
    const root = tempDir();
    fs.mkdirSync(join(root, 'cache'));
    for (const after of [0, 3]) {
      const spill = new SpillSort(root, 'x.jsonl', 2, 256);
      for (let i = 0; i < 2000; i++) spill.push((i * 7919) % 1000, i, 0, 0, i, 0);
      const flipped = flipScratchReads(after);
      try {
        expect(() => {
          for (const m = spill.merged(); !m.done; m.next());
        }).toThrow(SpillFailed);
      } finally {
        flipped.mockRestore();
        spill.close();
      }
    }
  });

  it('leave a rebuild answering as a replay, with no index built and no file left in cache/', async () => {
    const dir = await seeded();
    const truth = replay(dir);
    dropCache(dir);
    const flipped = flipScratchReads();
    try {
      for (const key of ['imp1', 's7', 'imp250']) expect((await dir.readKey(SESSION_STORE, key)).get(key as never)).toEqual(truth.get(key as never));
    } finally {
      flipped.mockRestore();
    }
    expect(fs.readdirSync(join(dir.root, 'cache')).filter((n) => n.startsWith(indexName(SESSION_STORE.file)))).toEqual([]);
    // The next read, with reads as they are, rebuilds it: the base a replay would have built.
    await expectReplayAnswers(dir);
  });
});

describe('rebuilding a lost index by streaming', () => {
  it('answers the first read as a replay does and writes the very base a replay would have built', async () => {
    const dir = await seeded();
    // The old way: a whole replay (a plain list reads everything) builds the base from its state.
    dropCache(dir);
    await dir.read(SESSION_STORE);
    const replayBuilt = baseEntries(dir);
    dropCache(dir);
    const truth = replay(dir);
    const keys = [...truth.keys()].filter((_, i) => i % 41 === 0);
    expect(keys.some((k) => unscopeSessionId(k).agent === 'a') && keys.some((k) => unscopeSessionId(k).agent === undefined)).toBe(true);
    for (const key of keys) {
      dropCache(dir);
      expect((await dir.readKey(SESSION_STORE, key)).get(key as never)).toEqual(truth.get(key as never));
      expect(baseEntries(dir)).toEqual(replayBuilt);
    }
    await expectReplayAnswers(dir);
    // A filtered read and a limited list rebuild it too.
    dropCache(dir);
    await dir.readIndexed(SESSION_STORE, { index: 'agent', equals: 'a' });
    expect(baseEntries(dir)).toEqual(replayBuilt);
    dropCache(dir);
    await listNewest(scope(dir, undefined, now()), { all: false, archived: false, stranded: true, allAgents: true }, 3);
    expect(baseEntries(dir)).toEqual(replayBuilt);
    // So does a write (under the lock), which then appends to it.
    dropCache(dir);
    await sessions.putSession(scope(dir, 'a', now()), 's1' as LogicalSessionId, { state: '{"after":true}' });
    await expectReplayAnswers(dir);
  });

  it('reports damage in the middle exactly as a replay does, answers as a replay does, and builds no index over it', async () => {
    const dir = await seeded();
    const bytes = fs.readFileSync(journal(dir));
    const middle = bytes.indexOf('"s7"', Math.floor(bytes.length / 2));
    bytes[middle + 2] = '8'.charCodeAt(0); // the record no longer carries its hash
    fs.writeFileSync(journal(dir), bytes);
    const replayed = collecting();
    const truth = new DataDir(dir.root, replayed, 5_000).replay(SESSION_STORE).state;
    expect(replayed.told.length).toBeGreaterThan(0);
    for (const read of [
      (d: DataDir) => d.readKey(SESSION_STORE, 'imp1'),
      (d: DataDir) => d.readIndexed(SESSION_STORE, { index: 'agent', equals: 'a' }),
      (d: DataDir) => listNewest(scope(d, undefined, now()), { all: false, archived: false, stranded: false, allAgents: true }, 5),
    ]) {
      dropCache(dir);
      const reporter = collecting();
      const answer = await read(new DataDir(dir.root, reporter, 5_000));
      expect(reporter.told).toEqual(replayed.told);
      expect(fs.existsSync(join(dir.root, 'cache', indexName(SESSION_STORE.file)))).toBe(false);
      if (answer instanceof Map) for (const [key, r] of answer) expect(r).toEqual(truth.get(key));
    }
  });

  it('over a torn tail (a batch without its last record) folds none of it, binds the base before it, and reports it as before', async () => {
    const dir = await seeded();
    const before = replay(dir);
    // A batch that changes sessions already there (imp2 closed, imp4 and imp5 put anew), cut before its last record.
    const lines = ['imp2', 'imp4', 'imp5', 'fresh1'].map((id, i) =>
      JSON.stringify({ session_id: id, state: { torn: i }, status: i === 0 ? 'closed' : 'active', updated_at: new Date(START + HOUR).toISOString() }),
    );
    const copy = join(tempDir(), 'full');
    fs.cpSync(dir.root, copy, { recursive: true });
    await sessions.importSessions(scope(new DataDir(copy, collecting(), 5_000), undefined, now()), Buffer.from(`${lines.join('\n')}\n`), {
      maxStateBytes: 1 << 20,
    });
    const full = fs.readFileSync(join(copy, SESSION_STORE.file));
    const cut = full.lastIndexOf('\n', full.length - 2) + 1;
    const original = fs.statSync(journal(dir)).size;
    fs.writeFileSync(journal(dir), full.subarray(0, cut));
    dropCache(dir);
    const reporter = collecting();
    const torn = new DataDir(dir.root, reporter, 5_000);
    expect((await torn.readKey(SESSION_STORE, 'imp2')).get('imp2' as never)).toEqual(before.get('imp2' as never));
    expect(reporter.told.join('\n')).toMatch(/torn tail|incomplete batch/);
    expect(openManifest(dir.root, SESSION_STORE)!.binding.size).toBe(original);
    await expectReplayAnswers(dir);
  });

  it('stays a replay’s while a writer appends during a reader’s rebuild', async () => {
    const dir = await seeded();
    process.env.CRUX_TEST_REBUILD_ENTRIES = '512';
    // A big enough journal that a rebuild takes a while: 2,000 more sessions in one batch.
    const more = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ session_id: `bulk${i}`, state: { i }, updated_at: new Date(START).toISOString() }));
    await sessions.importSessions(scope(dir, undefined, now()), Buffer.from(`${more.join('\n')}\n`), { maxStateBytes: 1 << 20 });
    const env = testEnv({ CRUX_NOW: new Date(now()).toISOString() });
    // The writer's puts (each a process, rebuilding what the reader drops): 4 in `npm test`, 12 in CI's run.
    const puts = FULL ? 12 : 4;
    const script = `for i in $(seq 1 ${puts}); do "$0" --data-dir "$1" session put w$i "{\\"i\\":$i}" >/dev/null || exit 1; done`;
    const writer = execa('sh', ['-c', script, CRUX, dir.root], { env });
    let done = false;
    void writer.finally(() => {
      done = true;
    });
    let rebuilds = 0;
    while (!done || rebuilds === 0) {
      dropIndex(dir);
      const reader = new DataDir(dir.root, collecting(), 5_000);
      const truth = replay(reader);
      expect((await reader.readKey(SESSION_STORE, 'bulk17')).get('bulk17' as never)).toEqual(truth.get('bulk17' as never));
      rebuilds += 1;
      // Reads are synchronous underneath: let the writer's exit be seen.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await writer;
    await expectReplayAnswers(dir);
    expect((await dir.readKey(SESSION_STORE, `w${puts}`)).get(`w${puts}` as never)?.state).toBe(`{"i":${puts}}`);
  }, 180_000);
});
