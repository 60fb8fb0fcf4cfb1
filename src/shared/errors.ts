// The one error table: every failure crux reports has a kind, and each kind one exit code (SPEC §2).
import { scrubText } from './scrub';

export const EXIT_CODES = {
  internal: 1,
  usage: 2,
  not_found: 3,
  conflict: 4,
  invalid_input: 5,
  verification_failed: 6,
  expired: 7,
  replayed: 8,
  journal_damaged: 9,
  lock_timeout: 75,
  // A full disk is a temporary failure: nothing was written, and the same command succeeds once space is freed.
  disk_full: 75,
  // A shared store's server out of reach (refused, authentication, connection lost): nothing committed.
  store_unavailable: 75,
} as const;

export type ErrorKind = keyof typeof EXIT_CODES;

/**
 * The hint each kind gets when the error names none, so every error line reads `crux: <what> (<hint>)` (SPEC §2).
 * A failed command changes nothing, and the hints say so where an operator might wonder.
 */
export const DEFAULT_HINTS: Record<ErrorKind, string> = {
  internal: 'this is a bug: please report it with the command you ran',
  usage: 'see `crux --help`',
  not_found: 'nothing was changed; check the id (and the agent, for sessions)',
  conflict: 'nothing was changed: the current state does not allow it',
  invalid_input: "nothing was changed; the command's --help shows what it accepts",
  verification_failed: 'nothing was accepted; check the package and the key',
  expired: 'nothing was accepted; ask the sender for a fresh package',
  replayed: 'it was accepted before; nothing to do',
  journal_damaged: 'run `crux journal check` for the details',
  lock_timeout: 'another crux process holds the lock; safe to retry',
  disk_full: 'nothing was written; free some space and retry',
  store_unavailable: 'nothing was changed; safe to retry once the server is reachable',
};

/** The hint an error is reported with: its own, else its kind's. */
export const hintOf = (error: CruxError): string => error.hint ?? DEFAULT_HINTS[error.kind];

export class CruxError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'CruxError';
  }

  get exitCode(): number {
    return EXIT_CODES[this.kind];
  }
}

export const usage = (message: string, hint?: string) => new CruxError('usage', message, hint);
export const notFound = (message: string, hint?: string) => new CruxError('not_found', message, hint);
export const conflict = (message: string, hint?: string) => new CruxError('conflict', message, hint);
export const invalid = (message: string, hint?: string) => new CruxError('invalid_input', message, hint);
export const verificationFailed = (message: string, hint?: string) =>
  new CruxError('verification_failed', message, hint);

/** The machine-readable form of an error: `--json`'s stderr document and an MCP tool's refusal (SPEC §2, §10.1). */
export const errorDocument = (error: CruxError) => ({
  error: { code: error.exitCode, kind: error.kind, message: scrubText(error.message), hint: scrubText(hintOf(error)) },
});

/** Anything thrown that is not a CruxError is a bug (exit 1); CRUX_DEBUG=1 puts its stack in the message. */
export function internalError(caught: unknown, debug: boolean): CruxError {
  const detail = caught instanceof Error ? (debug ? caught.stack : caught.message) : String(caught);
  return new CruxError('internal', `internal error: ${detail}`, 'this is a bug: please report it with the command you ran; CRUX_DEBUG=1 shows the stack');
}
