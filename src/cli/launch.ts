// bin/crux itself: picks the bundle a command line runs from and runs it through V8's code cache (code-cache.ts).
// build.mjs bundles this file into bin/crux, one file with the loader inside: requiring a loader module of its own
// cost every call ~0.6 ms of module resolution (stat, realpath, the package scope's package.json) and compilation.
import { join } from 'node:path';
import { runBundle } from './code-cache';

// crux's stderr carries its own messages only (SPEC §3): no runtime warning NODE_OPTIONS asks for (the permission
// model's ExperimentalWarning, queued before this line runs and printed by this listener after it).
process.removeAllListeners('warning');
const dist = join(__dirname, '..', 'dist');
// The commands most calls are (`session get|put|close`, `case record`) run from a small bundle of their own,
// dist/fast.cjs (src/cli/fast); a command line it does not read as commander would, it hands to the full program.
const args = process.argv.slice(2);
const fast =
  (args.includes('session') && (args.includes('get') || args.includes('put') || args.includes('close'))) || (args.includes('case') && args.includes('record'));
if (!fast || !(runBundle(join(dist, 'fast.cjs')) as { handled?: boolean }).handled) runBundle(join(dist, 'crux.cjs'));
