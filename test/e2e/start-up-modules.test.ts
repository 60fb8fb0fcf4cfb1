// What a `session get` loads of Node besides what `node -e 0` does (docs/performance.md, Start-up): node:vm for the code
// cache, and no node:zlib. A get checksums its index's log, a page and the manifest through crc-32 while they come to
// less than 16 KiB in the process (derived/checksum.ts), and loads node:zlib (with Node's streams: ~2 ms) past them; a
// small store's log is frozen into a run every 192 entries (derived/store-index.ts: ~8 puts, under ~8.5 KiB), and the
// get reads at most two pages of its partition past ~70 puts (~17.5 KiB in all, within the 24 KiB a process checksums
// through crc-32), so a get stays under them whatever the number of puts before it.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crux, freshDataDir, tempDir } from '../helpers/cli';
import { crux as cruxInProcess } from '../helpers/run-cli';

/** Preloaded: writes the modules the process loaded to $MODULES_TO at exit. */
const TRACE = join(tempDir('crux-modules-'), 'modules.cjs');
fs.writeFileSync(TRACE, "process.on('exit', () => require('node:fs').writeFileSync(process.env.MODULES_TO, process.moduleLoadList.join('\\n')));\n");

/** The pages of the sessions' index partitions in `dir` (the manifest, the first block of cache/<journal>.idx, names each run; a run is its pages). */
function partitionPages(dir: string): number[] {
  const cache = join(dir, 'cache');
  const manifest = fs.readFileSync(join(cache, 'sessions.jsonl.idx'), 'latin1');
  return [...manifest.matchAll(/"id":"(\w+)"/g)].map(
    ([, id]) => (fs.statSync(join(cache, `sessions.jsonl.idx.${id}`), { throwIfNoEntry: false })?.size ?? 0) / 4096,
  );
}

describe('a session get’s start', () => {
  it('loads no node:zlib over a small store, at any point of its index log’s growth (12 puts, a get after each)', async () => {
    const dir = freshDataDir();
    const modules = join(tempDir(), 'modules');
    const env = { CRUX_AGENT: 'a', NODE_OPTIONS: `--require ${TRACE}`, MODULES_TO: modules };
    for (let i = 0; i < 5; i++) expect((await crux(dir, ['session', 'put', `s${i}`, '{"step":0}'], { env: { CRUX_AGENT: 'a' } })).exitCode).toBe(0);
    const logSizes: number[] = [];
    for (let i = 0; i < 12; i++) {
      expect((await crux(dir, ['session', 'put', `s${i % 5}`, JSON.stringify({ step: i, note: 'x'.repeat(40) })], { env: { CRUX_AGENT: 'a' } })).exitCode).toBe(
        0,
      );
      logSizes.push(fs.statSync(join(dir, 'cache', 'sessions.jsonl.idx'), { throwIfNoEntry: false })?.size ?? 0);
      const get = await crux(dir, ['session', 'get', 's1'], { env });
      expect(get.exitCode, get.stderr).toBe(0);
      const loaded = fs.readFileSync(modules, 'utf8').split('\n');
      expect(loaded, `get after put ${i} (index log ${logSizes.at(-1)} bytes)`).not.toContain('NativeModule zlib');
      expect(loaded).not.toContain('NativeModule stream');
    }
    // The puts went through a freeze of the log (it shrank), and the gets read logs of several sizes.
    expect(logSizes.some((size, i) => i > 0 && size < logSizes[i - 1]!)).toBe(true);
    expect(Math.max(...logSizes)).toBeGreaterThan(6 * 1024);
  });

  it('loads no node:zlib once the index’s partition holds two pages (~70 puts), at any point of the log’s growth', async () => {
    // The get then reads both pages of the partition (its first and its last, to place its search) besides its log:
    // up to ~17.5 KiB checksummed, which a budget of 16 KiB sent through node:zlib after 6 and 7 puts of every 8.
    const dir = freshDataDir();
    const modules = join(tempDir(), 'modules');
    const agent = { CRUX_AGENT: 'a' };
    const put = async (id: string, step: number) =>
      expect((await cruxInProcess(dir, ['session', 'put', id, JSON.stringify({ step })], { env: agent })).exitCode).toBe(0);
    for (let i = 0; i < 5; i++) await put(`s${i}`, 0);
    let puts = 0;
    while (Math.max(...partitionPages(dir)) < 2) {
      expect(puts, 'a partition of two pages within 150 puts').toBeLessThan(150);
      await put(`s${puts % 5}`, puts++);
    }
    const logSizes: number[] = [];
    for (let i = 0; i < 9; i++) {
      await put(`s${puts % 5}`, puts++);
      logSizes.push(fs.statSync(join(dir, 'cache', 'sessions.jsonl.idx'), { throwIfNoEntry: false })?.size ?? 0);
      const get = await crux(dir, ['session', 'get', 's1'], { env: { ...agent, NODE_OPTIONS: `--require ${TRACE}`, MODULES_TO: modules } });
      expect(get.exitCode, get.stderr).toBe(0);
      const loaded = fs.readFileSync(modules, 'utf8').split('\n');
      expect(loaded, `get after put ${puts} (index log ${logSizes.at(-1)} bytes, pages ${partitionPages(dir)})`).not.toContain('NativeModule zlib');
    }
    // The log went through a freeze (it shrank) and grew past 7 KiB: a get after each of its lengths.
    expect(logSizes.some((size, i) => i > 0 && size < logSizes[i - 1]!)).toBe(true);
    expect(Math.max(...logSizes)).toBeGreaterThan(7 * 1024);
  });
});
