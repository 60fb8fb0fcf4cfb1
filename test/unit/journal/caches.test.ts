// The key index and the state snapshot: caches that must never change an answer, only its cost.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { cachePath } from '../../../src/journal/derived/cache-file';
import { indexName } from '../../../src/journal/derived/index-base';
import { snapshotName } from '../../../src/journal/derived/snapshot';

const indexPath = (root: string, file: string) => cachePath(root, indexName(file));
const snapshotPath = (root: string, file: string) => cachePath(root, snapshotName(file));
import type { SnapshotBody, StoreSpec } from '../../../src/journal/codec/store-spec';
import { tempDir } from '../../helpers/cli';
import { ITEM_STORE, puts } from './fixtures';

const TS = '2026-11-29T21:00:00.000Z';

type Items = Map<string, unknown>;
/** The toy store with a key index and a JSON snapshot, counting how often evolve runs. */
function cachedStore(extra: Partial<StoreSpec<Items>> = {}): StoreSpec<Items> & { evolved: number } {
  const spec = {
    ...ITEM_STORE,
    evolved: 0,
    keyOf: (record: any) => record.data?.id,
    evolve(state: Items, record: any, at: any) {
      spec.evolved += 1;
      ITEM_STORE.evolve(state, record, at);
    },
    snapshot: {
      version: 1,
      encode: (state: Items) => Buffer.from(JSON.stringify([...state])),
      decode: (body: SnapshotBody) => new Map(JSON.parse(body.read(0, body.length).toString('utf8'))) as Items,
    },
  };
  return Object.assign(spec, extra);
}

function dataDir(): { dir: DataDir; warnings: string[] } {
  const warnings: string[] = [];
  return { dir: new DataDir(join(tempDir(), 'data'), { warn: (m) => warnings.push(m) }, 5_000), warnings };
}

const replayed = (dir: DataDir, spec: StoreSpec<Items>) => dir.replay(spec, { quiet: true }).state;

describe('key index', () => {
  it('answers one key from its own lines, and agrees with a full replay', async () => {
    const spec = cachedStore();
    const { dir } = dataDir();
    await dir.write((tx) => tx.append(spec, puts(200)), TS);
    await dir.write(async (tx) => {
      await tx.loadKey(spec, 'k7');
      tx.append(spec, [{ ev: 'item.put', data: { id: 'k7', value: 'seven' } }]);
    }, TS);
    expect(fs.existsSync(indexPath(dir.root, spec.file))).toBe(true);
    spec.evolved = 0;
    const one = await dir.readKey(spec, 'k7');
    expect(one.get('k7')).toBe('seven');
    expect(spec.evolved).toBe(2);
    expect(replayed(dir, spec).get('k7')).toBe('seven');
  });

  it('reads a key from its last resetting record on', async () => {
    const spec = cachedStore({ resets: (record) => record.ev === 'item.put' });
    const { dir } = dataDir();
    for (let i = 0; i < 30; i++) {
      await dir.write(async (tx) => {
        await tx.loadKey(spec, 'k1');
        tx.append(spec, [{ ev: 'item.put', data: { id: 'k1', value: i } }]);
      }, TS);
    }
    await dir.write(async (tx) => {
      await tx.loadKey(spec, 'k1');
      tx.append(spec, [{ ev: 'item.deleted', data: { id: 'k1' } }]);
    }, TS);
    spec.evolved = 0;
    expect((await dir.readKey(spec, 'k1')).has('k1')).toBe(false);
    // The last put and the delete after it: 2 lines read, not 31.
    expect(spec.evolved).toBe(2);
  });

  it('is ignored after another program edits the journal, even within the same clock tick', async () => {
    const spec = cachedStore();
    const { dir, warnings } = dataDir();
    await dir.write((tx) => tx.append(spec, puts(3)), TS);
    const path = dir.path(spec.file);
    // Same size, written at once: only the stamped mtime tells the edit apart.
    fs.writeFileSync(path, fs.readFileSync(path, 'utf8').replace('"value":2', '"value":9'));
    const state = await dir.readKey(spec, 'k2');
    expect(state.has('k2')).toBe(false);
    expect(warnings.join('\n')).toContain(':2: hash mismatch');
  });

  it('is not written over a damaged journal, so every later command keeps reporting the damage', async () => {
    const spec = cachedStore();
    const { dir, warnings } = dataDir();
    await dir.write((tx) => tx.append(spec, puts(3)), TS);
    const path = dir.path(spec.file);
    fs.writeFileSync(path, fs.readFileSync(path, 'utf8').replace('"value":2', '"value":9'));
    await dir.write(async (tx) => {
      await tx.loadKey(spec, 'k9');
      tx.append(spec, puts(1, 9));
    }, TS);
    expect(fs.existsSync(indexPath(dir.root, spec.file))).toBe(false);
    warnings.length = 0;
    await dir.readKey(spec, 'k1');
    expect(warnings.join('\n')).toContain(':2: hash mismatch');
  });
});

describe('state snapshot', () => {
  it('serves whole-store reads, continued by the records written after it', async () => {
    const spec = cachedStore();
    const { dir } = dataDir();
    await dir.write((tx) => tx.append(spec, puts(100)), TS);
    expect(fs.existsSync(snapshotPath(dir.root, spec.file))).toBe(true);
    // Writes that read one key do not rewrite the snapshot; readers replay the records after it.
    for (const id of ['k1', 'k2']) {
      await dir.write(async (tx) => {
        await tx.loadKey(spec, id);
        tx.append(spec, [{ ev: 'item.deleted', data: { id } }]);
      }, TS);
    }
    spec.evolved = 0;
    const state = await dir.read(spec);
    expect(spec.evolved).toBe(2);
    expect(state).toEqual(replayed(dir, spec));
    expect(state.has('k1')).toBe(false);
    expect(state.size).toBe(98);
  });

  it('is not trusted once another program has edited the journal', async () => {
    const spec = cachedStore();
    const { dir, warnings } = dataDir();
    await dir.write((tx) => tx.append(spec, puts(5)), TS);
    await dir.write(async (tx) => {
      await tx.loadKey(spec, 'k6');
      tx.append(spec, puts(1, 6));
    }, TS);
    const path = dir.path(spec.file);
    // An edit before the snapshot's head, and a line appended: the file grew, but not through crux.
    const text = fs.readFileSync(path, 'utf8').replace('"value":1', '"value":7');
    fs.writeFileSync(path, `${text}${text.split('\n')[0]}\n`);
    const state = await dir.read(spec);
    expect(state.has('k1')).toBe(false);
    expect(warnings.join('\n')).toContain(':1: hash mismatch');
  });

  it('is rebuilt from the new file after compaction', async () => {
    const spec = cachedStore();
    const { dir } = dataDir();
    await dir.write((tx) => tx.append(spec, puts(50)), TS);
    await dir.write((tx) => tx.append(spec, puts(50)), TS);
    await dir.compact([spec], TS);
    spec.evolved = 0;
    const state = await dir.read(spec);
    expect(spec.evolved).toBe(0);
    expect(state).toEqual(replayed(dir, spec));
    expect(state.size).toBe(50);
  });
});
