// What each fast bundle's entry does (fast/*-main.ts, main.ts): the command its table reads on the line, run and
// turned into one exit code as the full program would (SPEC §2); or, for a line it cannot read as commander would
// (parse.ts) or that its store hands on (journal/dir/quick-read.ts), nothing at all: bin/crux then offers it to the
// next bundle, at last to the full program (dist/crux.cjs).
import { closeStores, resolveStore } from '../store';
import { cruxErrorOf, exitWith, failed, outputOutcome } from '../outcome';
import { parseFast, type FastCommand, type FastParse } from './parse';
import { HandOn } from '../../journal/dir/quick-read';

/**
 * True in the fast bundles built without the PostgreSQL engine (build.mjs: dist/fast-read.cjs, dist/fast.cjs, …,
 * which bin/crux loads for a line that names no PostgreSQL store); undefined elsewhere (fast-pg.cjs, tests).
 */
declare const CRUX_FAST_WITHOUT_POSTGRES: boolean | undefined;
const withoutPostgres = typeof CRUX_FAST_WITHOUT_POSTGRES === 'boolean' && CRUX_FAST_WITHOUT_POSTGRES;

/**
 * Whether a line's store is one this bundle cannot open: a PostgreSQL store in a bundle without its engine. A
 * store the line does not name validly is not decided here either: the full program reports it.
 */
function beyondThisBundle(globals: FastParse<any>['globals']): boolean {
  if (!withoutPostgres) return false;
  try {
    return resolveStore({ store: globals.store, dataDir: globals.dataDir }, process.env).kind !== 'dir';
  } catch {
    return true;
  }
}

/** The command's exit code, or undefined when its store handed the line on (HandOn: nothing done or printed). */
async function run(parsed: FastParse<any>, json: boolean): Promise<number | undefined> {
  try {
    await parsed.command.run(parsed.operands, parsed.opts, parsed.globals);
    return outputOutcome(json);
  } catch (caught) {
    if (caught instanceof HandOn) return undefined;
    return failed(cruxErrorOf(caught), json);
  } finally {
    // A shared store's connection would keep the process alive.
    await closeStores();
  }
}

/** Build step (see build.mjs): run several commands in one process so V8's code cache covers them all. */
async function warmUp(commands: readonly FastCommand<any>[], lines: string[][]): Promise<number> {
  for (const args of lines) {
    const parsed = parseFast(args, commands);
    if (parsed === undefined) throw new Error(`not a fast command: ${args.join(' ')}`);
    await run(parsed, args.includes('--json'));
  }
  return 0;
}

/**
 * Runs the line of this process with `commands`, answering whether it took it (else bin/crux offers it to the next
 * bundle, at last to the full program): at once for a line it does not read as its own, when the command is done
 * for one it does (its store may hand it on: journal/dir/quick-read.ts).
 */
export function startFast(commands: readonly FastCommand<any>[]): boolean | Promise<boolean> {
  const warmUpLines = process.env.CRUX_WARM_UP;
  if (warmUpLines) {
    exitWith(warmUp(commands, JSON.parse(warmUpLines)));
    return true;
  }
  const parsed = parseFast(process.argv.slice(2), commands);
  if (parsed === undefined || beyondThisBundle(parsed.globals)) return false;
  const outcome = run(parsed, process.argv.includes('--json'));
  exitWith(outcome, { promptly: true });
  return outcome.then(
    (code) => code !== undefined,
    () => true,
  );
}
