// What a `session get` loads of Node besides what `node -e 0` does (docs/performance.md, Start-up): node:vm for the code
// cache, and no node:zlib. A get checksums its index's log, a page and the manifest through crc-32 while they come to
// less than 16 KiB in the process (derived/checksum.ts), and loads node:zlib (with Node's streams: ~2 ms) past them; a
// small store's log is frozen into a run every 192 entries (derived/store-index.ts: ~8 puts, under ~8.5 KiB), so a get
// stays under them whatever the number of puts before it.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crux, freshDataDir, tempDir } from '../helpers/cli';

/** Preloaded: writes the modules the process loaded to $MODULES_TO at exit. */
const TRACE = join(tempDir('crux-modules-'), 'modules.cjs');
fs.writeFileSync(TRACE, "process.on('exit', () => require('node:fs').writeFileSync(process.env.MODULES_TO, process.moduleLoadList.join('\\n')));\n");

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
});
