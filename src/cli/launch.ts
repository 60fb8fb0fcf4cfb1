// bin/crux itself: picks the bundle a command line runs from and runs it through V8's code cache (code-cache.ts).
// build.mjs bundles this file into bin/crux, one file with the loader inside: requiring a loader module of its own
// cost every call ~0.6 ms of module resolution (stat, realpath, the package scope's package.json) and compilation.
import { join } from 'node:path';
import { runBundle } from './code-cache';
import { diesWithHander, handTo, otherNodeOnPath } from './path-node';
import { permissionRefusal } from '../shared/permission-model';
import { fs } from '../shared/fs';

/**
 * The Node that built this launcher, in bin/pinned/crux.cjs (build.mjs), whose first line names it by absolute path;
 * undefined in bin/crux.cjs, the package's bin, which starts through `#!/usr/bin/env node`.
 */
declare const CRUX_PINNED_NODE: string | undefined;
const pinned = typeof CRUX_PINNED_NODE === 'string' ? CRUX_PINNED_NODE : undefined;

// crux's stderr carries its own messages only (SPEC §3): no runtime warning NODE_OPTIONS asks for (the permission
// model's ExperimentalWarning, queued before this line runs and printed by this listener after it).
process.removeAllListeners('warning');
// A Node the pinned launcher handed this line to dies with the launcher (path-node.ts); the package's launcher hands
// no line on, and reads no variable of the kind.
if (pinned !== undefined) diesWithHander();
const dist = join(__dirname, pinned === undefined ? '..' : '../..', 'dist');
// Started by its first line (argv[0] is then the interpreter named there), the pinned launcher runs where env would
// have: on the first node on PATH, when that is another Node (path-node.ts). Run as `node bin/crux`, it runs there.
const elsewhere = pinned !== undefined && process.argv0 === pinned ? otherNodeOnPath(process.env.PATH, process.execPath) : undefined;
// The commands most calls are run from small bundles of their own (src/cli/fast), so that none carries another's
// code: `session get` from dist/fast-read.cjs, `session put|close` from dist/fast.cjs, `case record` from
// dist/fast-record.cjs, `session list` from dist/fast-list.cjs and `case retrieve` from dist/fast-retrieve.cjs; a
// command line the bundle does not read as commander would, it hands back, and it is offered to the next, at last
// to the full program.
const args = process.argv.slice(2);
const session = args.includes('session');
const kase = args.includes('case');
// Each has a twin with the PostgreSQL engine (fast-read-pg.cjs, …), for a line that may name such a store; the
// bundles without it hand such a line on (a guess the other way runs the same, from crux.cjs).
const postgres = !!process.env.CRUX_STORE || args.some((a) => a === '--store' || a.startsWith('--store='));
/** Whether the bundle took the line: at once, or when its command is done (a store may hand the line on). */
const handled = (bundle: string) =>
  (runBundle(join(dist, postgres ? `${bundle}-pg.cjs` : `${bundle}.cjs`)) as { handled?: boolean | Promise<boolean> }).handled ?? false;
// A line with the words of two (`session put get '{}'`, `case record --task put --action session`, `case retrieve record`)
// is offered to each in turn: a bundle that does not read a line as its own does nothing with it.
const offers: (() => boolean | Promise<boolean>)[] = [];
if (elsewhere !== undefined) offers.push(() => handTo(elsewhere));
if (session && args.includes('get')) offers.push(() => handled('fast-read'));
if (session && (args.includes('put') || args.includes('close'))) offers.push(() => handled('fast'));
if (kase && args.includes('record')) offers.push(() => handled('fast-record'));
if (session && (args.includes('list') || args.includes('ls'))) offers.push(() => handled('fast-list'));
if (kase && args.includes('retrieve')) offers.push(() => handled('fast-retrieve'));

/**
 * A bundle that could not be loaded because Node's permission model lets this launcher be read and not the package's
 * dist/ (NODE_OPTIONS=--permission, whose entry point Node allows by itself, or --allow-fs-read naming bin/ alone):
 * one line naming what is missing, 5, as every refusal (SPEC §2). Anything else is thrown on: a bug.
 */
function cannotLoad(error: unknown): void {
  const refused = permissionRefusal(error, dist);
  if (refused === undefined) throw error;
  const message = refused.message;
  const hint = `nothing was changed; crux reads its own files in ${dist}: it needs --allow-fs-read=${join(dist, '*')} (and the data directory) in NODE_OPTIONS, or run without --permission`;
  const line = args.includes('--json') ? JSON.stringify({ error: { code: 5, kind: 'permission_denied', message, hint } }) : `crux: ${message} (${hint})`;
  fs.writeSync(2, `${line}\n`);
  process.exitCode = 5;
}

/** Offers the line to each bundle from the `from`th on, then to the full program. */
function offer(from: number): void {
  try {
    for (let i = from; i < offers.length; i++) {
      const taken = offers[i]!();
      if (taken === true) return;
      if (taken !== false) {
        void taken.then((yes) => yes || offer(i + 1));
        return;
      }
    }
    runBundle(join(dist, 'crux.cjs'));
  } catch (error) {
    cannotLoad(error);
  }
}
offer(0);
