// The V8 code cache is made for the Node that runs crux, on first use, when the package ships none for it
// (a package built on Node 20 and run on Node 24): atomically, in the user's cache directory, never in the way.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, testEnv } from '../helpers/cli';

const ROOT = resolve(__dirname, '../..');
const KEY = `${process.version}-${process.arch}`;

/** The package as another Node would meet it: bin/ and dist/ without the shipped caches. */
function packageWithoutShippedCache(): string {
  const dir = tempDir('crux-pkg-');
  // bin/crux is a link to bin/crux.cjs beside it: copied as it is, not made absolute (it would run this checkout).
  fs.cpSync(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true, verbatimSymlinks: true });
  fs.cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true, filter: (src) => !src.endsWith('.v8cache') && !src.endsWith('.tmp') });
  return dir;
}

async function run(pkg: string, env: Record<string, string | undefined>, args: string[], input?: string) {
  const data = join(tempDir(), 'data');
  const r = await execa(process.execPath, [join(pkg, 'bin/crux'), '--data-dir', data, ...args], { reject: false, input, env: testEnv(env), extendEnv: false });
  return { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

const buildId = (pkg: string, bundle: string) => /\/\/# crux-build (\w+)\n$/.exec(fs.readFileSync(join(pkg, 'dist', bundle), 'utf8'))![1]!;

describe('the code cache', () => {
  it('ships one for the Node that built the package, beside each bundle', () => {
    const names = fs.readdirSync(join(ROOT, 'dist'));
    expect(names).toContain(`crux.cjs.${KEY}.v8cache`);
    expect(names).toContain(`mcp.cjs.${KEY}.v8cache`);
    // The fast paths' (src/cli/launch.ts), a bundle for each kind of call, and their twins with the PostgreSQL engine.
    for (const bundle of ['fast-read', 'fast', 'fast-record', 'fast-list', 'fast-retrieve']) {
      expect(names).toContain(`${bundle}.cjs.${KEY}.v8cache`);
      expect(names).toContain(`${bundle}-pg.cjs.${KEY}.v8cache`);
    }
  });

  it("makes the fast paths' caches on first use, one per bundle, each then used as it is", async () => {
    const pkg = packageWithoutShippedCache();
    const cache = tempDir();
    const dir = join(cache, 'crux', 'code');
    const name = (bundle: string) => `${bundle}-${buildId(pkg, bundle)}-${KEY}.v8cache`;
    const data = join(tempDir(), 'data');
    const crux = (args: string[]) =>
      execa(process.execPath, [join(pkg, 'bin/crux'), '--data-dir', data, ...args], {
        reject: false,
        env: testEnv({ XDG_CACHE_HOME: cache }),
        extendEnv: false,
      });
    expect((await crux(['session', 'put', 's1', '{"a":1}'])).exitCode).toBe(0);
    expect(fs.readdirSync(dir)).toEqual([name('fast.cjs')]);
    const get = await crux(['session', 'get', 's1']);
    expect({ exitCode: get.exitCode, stdout: String(get.stdout) }).toEqual({ exitCode: 0, stdout: '{"a":1}' });
    expect(fs.readdirSync(dir).sort()).toEqual([name('fast-read.cjs'), name('fast.cjs')].sort());
    expect((await crux(['session', 'list', '--json'])).exitCode).toBe(0);
    expect(fs.readdirSync(dir).sort()).toEqual([name('fast-read.cjs'), name('fast.cjs'), name('fast-list.cjs')].sort());
    const made = fs.statSync(join(dir, name('fast-read.cjs'))).mtimeMs;
    expect(String((await crux(['session', 'get', 's1'])).stdout)).toBe('{"a":1}');
    expect(fs.statSync(join(dir, name('fast-read.cjs'))).mtimeMs).toBe(made);
  });

  it('is made on first use under XDG_CACHE_HOME, named for this Node and build, then used as it is', async () => {
    const pkg = packageWithoutShippedCache();
    const cache = tempDir();
    const first = await run(pkg, { XDG_CACHE_HOME: cache }, ['session', 'machine', '--json']);
    expect(first).toMatchObject({ exitCode: 0, stderr: '' });
    const dir = join(cache, 'crux', 'code');
    const file = join(dir, `crux.cjs-${buildId(pkg, 'crux.cjs')}-${KEY}.v8cache`);
    expect(fs.readdirSync(dir)).toEqual([`crux.cjs-${buildId(pkg, 'crux.cjs')}-${KEY}.v8cache`]);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(file).size).toBeGreaterThan(10_000);
    const made = fs.statSync(file);
    // Accepted by V8, so not written again.
    const second = await run(pkg, { XDG_CACHE_HOME: cache }, ['session', 'machine', '--json']);
    expect(second.stdout).toBe(first.stdout);
    expect(fs.statSync(file).mtimeMs).toBe(made.mtimeMs);
    expect(fs.statSync(file).ino).toBe(made.ino);
  });

  it("replaces a damaged cache and removes those of other builds, keeping other Nodes' ones; crux runs the same meanwhile", async () => {
    const pkg = packageWithoutShippedCache();
    const cache = tempDir();
    const dir = join(cache, 'crux', 'code');
    const name = `crux.cjs-${buildId(pkg, 'crux.cjs')}-${KEY}.v8cache`;
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(join(dir, name), 'not a code cache');
    fs.writeFileSync(join(dir, `crux.cjs-0123456789abcdef-${KEY}.v8cache`), 'an older build');
    const otherNode = `crux.cjs-${buildId(pkg, 'crux.cjs')}-v99.0.0-${process.arch}.v8cache`;
    fs.writeFileSync(join(dir, otherNode), 'another Node');
    fs.writeFileSync(join(dir, 'mcp.cjs-0123456789abcdef-v18.0.0-x64.v8cache'), 'another bundle');
    const r = await run(pkg, { XDG_CACHE_HOME: cache }, ['session', 'machine', '--json']);
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(JSON.parse(r.stdout).states.length).toBeGreaterThan(2);
    expect(fs.readdirSync(dir).sort()).toEqual([name, otherNode, 'mcp.cjs-0123456789abcdef-v18.0.0-x64.v8cache'].sort());
    expect(fs.statSync(join(dir, name)).size).toBeGreaterThan(10_000);
  });

  it('costs nothing but speed where it cannot be written: an unwritable directory, no HOME', async () => {
    const pkg = packageWithoutShippedCache();
    const blocked = join(tempDir(), 'a-file');
    fs.writeFileSync(blocked, '');
    for (const env of [{ XDG_CACHE_HOME: blocked }, { XDG_CACHE_HOME: undefined, HOME: '' }, { XDG_CACHE_HOME: 'relative', HOME: undefined }]) {
      const r = await run(pkg, env, ['--data-dir', tempDir(), 'session', 'machine', '--json']);
      expect(r.exitCode, JSON.stringify(env)).toBe(0);
      expect(r.stderr).toBe('');
    }
    expect(fs.statSync(blocked).size).toBe(0);
  });

  it('covers the MCP bundle too (dist/mcp.cjs, loaded by crux mcp)', async () => {
    const pkg = packageWithoutShippedCache();
    const cache = tempDir();
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    });
    const r = await run(pkg, { XDG_CACHE_HOME: cache }, ['mcp'], `${init}\n`);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('"protocolVersion"');
    expect(fs.readdirSync(join(cache, 'crux', 'code')).sort()).toEqual([
      `crux.cjs-${buildId(pkg, 'crux.cjs')}-${KEY}.v8cache`,
      `mcp.cjs-${buildId(pkg, 'mcp.cjs')}-${KEY}.v8cache`,
    ]);
  });
});
