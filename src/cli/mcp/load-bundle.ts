// Loads a bundle that sits beside dist/crux.cjs through V8's code cache (<bundle>.v8cache, made at build time
// with CRUX_WRITE_MCP_CODE_CACHE=1), as bin/crux loads crux.cjs: the MCP SDK compiles in a third of the time.
// A plain require: esbuild wraps a namespace import in a per-module copy of every fs export.
const fs = require('node:fs') as typeof import('node:fs');
import { dirname } from 'node:path';

export function loadBundle(file: string): unknown {
  const vm = require('node:vm') as typeof import('node:vm');
  const Module = require('node:module') as typeof import('node:module');
  const cacheFile = `${file}.v8cache`;
  let cachedData: Buffer | undefined;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    // No cache: compile from source.
  }
  const script = new vm.Script(Module.wrap(fs.readFileSync(file, 'utf8')), {
    filename: file,
    cachedData,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (process.env.CRUX_WRITE_MCP_CODE_CACHE === '1') {
    // Build step: keep what V8 compiled during one client session; renamed into place, whole or not at all.
    process.once('exit', () => {
      fs.writeFileSync(`${cacheFile}.${process.pid}.tmp`, script.createCachedData());
      fs.renameSync(`${cacheFile}.${process.pid}.tmp`, cacheFile);
    });
  }
  const module = { exports: {} };
  script.runInThisContext()(module.exports, Module.createRequire(file), module, file, dirname(file));
  return module.exports;
}
