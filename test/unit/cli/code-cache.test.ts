// The loader (src/cli/code-cache.ts, built into bin/crux): a bundle's relative requires name the bundles beside
// it (dist/pg.cjs, dist/toml.cjs), whichever module runs the loader.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBundle } from '../../../src/cli/code-cache';
import { tempDir } from '../../helpers/cli';

describe('runBundle', () => {
  it("resolves a bundle's ./ requires from the bundle's own directory, and node: ones as Node's", () => {
    const dir = tempDir('crux-loader-');
    fs.writeFileSync(join(dir, 'main.cjs'), "module.exports = { beside: require('./beside.cjs').value, sep: require('node:path').sep, dir: __dirname };\n");
    fs.writeFileSync(join(dir, 'beside.cjs'), "exports.value = 'beside';\n");
    expect(runBundle(join(dir, 'main.cjs'), { env: {} })).toEqual({ beside: 'beside', sep: '/', dir });
  });
});
