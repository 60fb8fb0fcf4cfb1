// How a command's run becomes one exit code (SPEC §2): its error reported on stderr, its output's fate weighed,
// the process kept from ending 0 on work left waiting. Shared by the full program (main.ts) and the fast path.
import { CruxError, errorDocument, EXIT_CODES, hintOf, internalError } from '../shared/errors';
import { stdoutFailure, writeStderr } from '../output/stdout';
import { withWarnings, type JournalWarning } from '../output/emit';
import { committed } from '../shared/commit-log';
import { keptText } from '../shared/free-text';
// A message may quote its input (a JSON parser's excerpt of random bytes, an unknown option): the error stays
// one line that a terminal prints as written and does not act on.
import { printableMessage as printable } from '../shared/printable';

function reportError(error: CruxError, json: boolean, warnings?: readonly JournalWarning[]): void {
  // A message may quote a bad value (`--reward 'https://u:token@h'`): never echo its credentials (SPEC §8). The
  // document carries the damage the command passed over before it was refused, as an answer's would.
  if (json) writeStderr(`${withWarnings(JSON.stringify(errorDocument(error)), warnings)}\n`);
  else writeStderr(`crux: ${printable(keptText(error.message))} (${printable(keptText(hintOf(error)))})\n`);
}

/** A thrown value as crux reports it: its own error, or an environment's (a full disk) or internal one. */
export const cruxErrorOf = (caught: unknown): CruxError => (caught instanceof CruxError ? caught : internalError(caught, Boolean(process.env.CRUX_DEBUG)));

/** Reports `error` (with `--json`, and the damage passed over on the way) and answers its kind's exit code. */
export function failed(error: CruxError, json: boolean, warnings?: readonly JournalWarning[]): number {
  reportError(error, json, warnings);
  return EXIT_CODES[error.kind];
}

/**
 * The exit of a command that ran to its end, given what became of its output. A closed pipe on a query is the
 * reader's choice (`crux … | head`): 0, quietly. After a committed write the effect is durable, so whatever
 * became of stdout the exit is 0, with one line on stderr saying what was done (a retrying wrapper must not
 * repeat it). A query whose output hit a full device or an I/O error failed: its kind's code.
 */
export function outputOutcome(json: boolean): number {
  const failure = stdoutFailure();
  if (failure === undefined) return 0;
  const done = committed();
  if (done.length > 0) {
    writeStderr(`crux: committed (${done.join('; ')}), but its output could not be written (${failure}): the write is durable, do not repeat it\n`);
    return 0;
  }
  if (failure === 'EPIPE') return 0;
  return failed(new CruxError('io_error', `cannot write standard output (${failure})`, 'nothing was changed; send the output where it can be written'), json);
}

/**
 * Sets the process's exit code from `run`. A command whose work was left waiting on nothing (a promise no one
 * settles) would end the process with 0, an acknowledgement of what may never have been committed: until `run`
 * answers, the exit is an internal error.
 *
 * With `promptly`, the process exits as soon as `run` answers, without tearing down Node's heap and handles one
 * by one as an exit by an empty event loop does (~0.5 ms for a get, 1–2 ms for a write: README, Start-up). Only
 * for a command whose every output went through output/stdout.ts's write(2) calls (the fast paths): a write to
 * process.stdout may still be pending at process.exit(). `run` has released its lock and closed its stores by
 * then; 'exit' listeners (a code cache written on first use) still run.
 */
export function exitWith(run: Promise<number | undefined>, opts: { promptly?: boolean } = {}): void {
  let answered = false;
  process.once('beforeExit', () => {
    if (answered) return;
    writeStderr('crux: internal error: the command ended without finishing (nothing it did is acknowledged; this is a bug: please report it)\n');
    process.exitCode = 1;
  });
  // undefined: a fast bundle handed the line on (fast/start.ts); the bundle that takes it answers.
  const answer = (code: number | undefined) => {
    answered = true;
    if (code === undefined) return;
    process.exitCode = code;
    if (opts.promptly) process.exit(code);
  };
  run.then(answer, (error) => {
    writeStderr(`crux: internal error: ${String(error)}\n`);
    answer(1);
  });
}
