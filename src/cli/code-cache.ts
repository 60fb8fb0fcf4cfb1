// Runs a bundle (dist/crux.cjs, dist/mcp.cjs) compiled through V8's code cache, which saves ~10 ms of compilation
// on every call. A cache is only good for the Node (V8) that made it, so there are two places to look:
//   - dist/<bundle>.<node version>-<arch>.v8cache, shipped: made at build time (build-hooks.ts names the bundles
//     to write it for) by the Node that built the package, compiled under a name of the package's own
//     (crux/dist/<bundle>), not the path it was built in: V8 keeps the name a cache was made under, and a stack
//     of an installed crux must not name the builder's files;
//   - $XDG_CACHE_HOME/crux/code (else ~/.cache/crux/code), made on first use by any other Node, named for that
//     Node and the bundle's build id (a content hash build.mjs appends), written atomically (a temporary file
//     renamed into place), so a crux starting meanwhile reads a whole cache or none.
// No usable cache (none, rejected by V8, an unwritable directory): the bundle compiles as usual and runs the same.
// This file is built into bin/crux (src/cli/launch.ts) and into the main bundle (crux mcp): node:* only.
import { fs } from '../shared/fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { buildHooks } from './build-hooks';

const BUILD_ID = '\n//# crux-build ';
const KEY = `${process.version}-${process.arch}`;

/** The directory of caches made on first use, or undefined where none can be named. */
function userCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'crux', 'code');
  const home = env.HOME;
  return home && isAbsolute(home) ? join(home, '.cache', 'crux', 'code') : undefined;
}

/**
 * A whole file, read with the calls every command makes anyway (open, fstat, read, close): fs.readFileSync's own
 * functions are Node's JS, compiled lazily in every process that calls them (~0.3 M instructions).
 */
function readWhole(path: string): Buffer {
  const fd = fs.openSync(path, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const bytes = Buffer.allocUnsafe(size);
    let at = 0;
    while (at < size) {
      const n = fs.readSync(fd, bytes, at, size - at, at);
      if (n === 0) break;
      at += n;
    }
    return at === size ? bytes : bytes.subarray(0, at);
  } finally {
    fs.closeSync(fd);
  }
}

function readOrUndefined(path: string): Buffer | undefined {
  try {
    return readWhole(path);
  } catch {
    return undefined;
  }
}

/** Writes `bytes` to `path` whole or not at all (a directory made for it is 0700). */
function writeAtomically(path: string, bytes: Buffer, mode: number): void {
  fs.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const staged = `${path}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(staged, bytes, { mode });
    fs.renameSync(staged, path);
  } catch (error) {
    fs.rmSync(staged, { force: true });
    throw error;
  }
}

/** Removes the caches of other builds of this bundle (an upgrade); those of other Node versions stay (nvm). */
function pruneOtherBuilds(dir: string, bundle: string, buildId: string): void {
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith(`${bundle}-`) && name.endsWith('.v8cache') && !name.startsWith(`${bundle}-${buildId}-`)) fs.rmSync(join(dir, name), { force: true });
  }
}

// CommonJS's wrapper (node:module's Module.wrap), written here: loading node:module for it and createRequire
// costs ~1.5 M instructions a call (a bundle's relative requires are resolved below, from its directory).
const WRAP_HEAD = '(function (exports, require, module, __filename, __dirname) { ';
const WRAP_TAIL = '\n});';

export function runBundle(file: string, opts: { env?: NodeJS.ProcessEnv } = {}): unknown {
  const env = opts.env ?? process.env;
  const vm = require('node:vm') as typeof import('node:vm');
  const source = readWhole(file).toString('utf8');
  const bundle = basename(file);
  const shipped = join(dirname(file), `${bundle}.${KEY}.v8cache`);
  const at = source.lastIndexOf(BUILD_ID);
  const buildId = at < 0 ? undefined : source.slice(at + BUILD_ID.length).trim();
  const userDir = buildId === undefined ? undefined : userCacheDir(env);
  const userName = `${bundle}-${buildId}-${KEY}.v8cache`;
  const writeShipped = buildHooks()?.writeCodeCache.includes(bundle) === true;

  // The shipped cache's name is a string of its own: `bundle` is a slice of `file`, and V8 would keep (and write into
  // the cache) the whole path it is cut from.
  const filename = writeShipped ? Buffer.from(`crux/dist/${bundle}`).toString() : file;
  const compile = (cachedData: Buffer | undefined) =>
    new vm.Script(WRAP_HEAD + source + WRAP_TAIL, { filename, cachedData, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
  // One compilation: the shipped cache when it is this Node's, else the one made here on first use.
  const cached = writeShipped ? undefined : (readOrUndefined(shipped) ?? (userDir === undefined ? undefined : readOrUndefined(join(userDir, userName))));
  const script = compile(cached);
  const accepted = script.cachedDataRejected === false;
  if (writeShipped || (!accepted && userDir !== undefined)) {
    // At exit, so that the cache holds every function this call compiled, not only the top level.
    process.once('exit', () => {
      try {
        // The shipped cache is a file of the package (0644); one made here is the user's own (0600).
        if (writeShipped) writeAtomically(shipped, script.createCachedData(), 0o644);
        else {
          writeAtomically(join(userDir!, userName), script.createCachedData(), 0o600);
          pruneOtherBuilds(userDir!, bundle, buildId!);
        }
      } catch {
        // A cache is an optimization: a directory that cannot be written costs speed, nothing else.
      }
    });
  }
  const module = { exports: {} };
  // A bundle's own `require('./pg.cjs')` names a bundle beside it: resolved from its directory, not from the
  // module that runs it (bin/crux, where this loader is built in).
  const dir = dirname(file);
  const bundleRequire = (id: string) => require(id.startsWith('./') ? join(dir, id) : id);
  script.runInThisContext()(module.exports, bundleRequire, module, file, dir);
  return module.exports;
}
