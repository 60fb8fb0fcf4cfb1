// Node's fs, for every module of crux. A plain require, made once: esbuild turns `import * as fs from 'node:fs'`
// into a per-module copy of every fs export (a getter each, built at start-up in every module that imports it);
// a bundled import of this binding is one reference. Tests that patch fs (fault injection) patch the same object.
export const fs = require('node:fs') as typeof import('node:fs');
