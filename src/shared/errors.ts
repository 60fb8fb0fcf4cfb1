// The one error table: every failure crux reports has a kind, and each kind one exit code (SPEC §2).

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
} as const;

export type ErrorKind = keyof typeof EXIT_CODES;

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
