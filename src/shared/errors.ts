// The one error table: every failure crux reports has a kind, and each kind one exit code (SPEC §2).
import { keptText } from './free-text';
import { permissionRefusal } from './permission-model';

export const EXIT_CODES = {
  internal: 1,
  usage: 2,
  not_found: 3,
  conflict: 4,
  invalid_input: 5,
  // Permission denied on a file or directory of the store (EACCES, EPERM, EROFS): the message names the path.
  permission_denied: 5,
  verification_failed: 6,
  // An encrypted store (SPEC §13) read or written without its key, or with another: the message names the key id.
  key_required: 6,
  expired: 7,
  replayed: 8,
  journal_damaged: 9,
  lock_timeout: 75,
  // A full disk is a temporary failure: nothing was written, and the same command succeeds once space is freed.
  disk_full: 75,
  // An I/O error of the device (EIO) or the system's limits (EMFILE, ENFILE): nothing was written; retry.
  io_error: 75,
  // A shared store's server out of reach (refused, authentication, connection lost): nothing committed.
  store_unavailable: 75,
  // A shared store's server refusing for good (authentication, no such role or database, no privilege): retrying cannot help.
  store_refused: 5,
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
  key_required: 'nothing was changed; give the store key with --key-file <file> or CRUX_KEY_FILE',
  expired: 'nothing was accepted; ask the sender for a fresh package',
  replayed: 'it was accepted before; nothing to do',
  journal_damaged: 'run `crux journal check` for the details',
  lock_timeout: 'another crux process holds the lock; safe to retry',
  permission_denied: 'nothing was changed; check the owner and mode of that path, and which user runs crux',
  disk_full: 'nothing was written; free some space and retry',
  io_error: 'nothing was written; check the device (dmesg) and retry',
  store_unavailable: 'nothing was changed; safe to retry once the server is reachable',
  store_refused: 'nothing was changed; fix the store URL or the server, retrying will not help',
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

/** The machine-readable form of an error: `--json`'s stderr document and an MCP tool's refusal (SPEC §2, §10.1). */
export const errorDocument = (error: CruxError) => ({
  error: { code: error.exitCode, kind: error.kind, message: keptText(error.message), hint: keptText(hintOf(error)) },
});

const PERMISSION = new Set(['EACCES', 'EPERM', 'EROFS']);
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);
const IO = new Set(['EIO', 'EMFILE', 'ENFILE']);

/**
 * A failure of the environment as its kind (SPEC §3: never exit 1): permission → 5 naming the path; no space,
 * quota, file too large → 75; I/O error → 75. undefined for anything else. `path` names what was being
 * accessed when the error itself does not (Node's fs errors carry it).
 */
export function environmentError(caught: unknown, path?: string): CruxError | undefined {
  if (caught instanceof CruxError || caught === null || typeof caught !== 'object') return undefined;
  const { code, path: errorPath, dest } = caught as NodeJS.ErrnoException & { dest?: string };
  if (typeof code !== 'string') return undefined;
  const where = path ?? errorPath ?? dest ?? 'the data directory';
  // Node's permission model (NODE_OPTIONS=--permission, or --experimental-permission on Node 20) refused it.
  const refused = permissionRefusal(caught, where);
  if (refused !== undefined) {
    return new CruxError('permission_denied', refused.message, `nothing was changed; it needs ${refused.missing} in NODE_OPTIONS, or run without --permission`);
  }
  if (PERMISSION.has(code)) {
    const what = code === 'EROFS' ? 'read-only file system' : 'permission denied';
    return new CruxError('permission_denied', `${what}: ${where} (${code})`);
  }
  if (NO_SPACE.has(code)) {
    const what = code === 'EFBIG' ? 'the file is too large for this file system' : code === 'EDQUOT' ? 'the disk quota is exceeded' : 'the disk is full';
    return new CruxError('disk_full', `${what}: cannot write ${where} (${code})`);
  }
  if (IO.has(code)) return new CruxError('io_error', `${code === 'EIO' ? 'I/O error' : 'too many open files'}: ${where} (${code})`);
  return undefined;
}

/**
 * Anything thrown that is not a CruxError: a failure of the environment gets its own kind (above); everything
 * else is a bug (exit 1), and CRUX_DEBUG=1 puts its stack in the message.
 */
export function internalError(caught: unknown, debug: boolean): CruxError {
  const environment = environmentError(caught);
  if (environment !== undefined) return environment;
  const detail = caught instanceof Error ? (debug ? caught.stack : caught.message) : String(caught);
  return new CruxError('internal', `internal error: ${detail}`, 'this is a bug: please report it with the command you ran; CRUX_DEBUG=1 shows the stack');
}
