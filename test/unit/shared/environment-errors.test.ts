// Every failure of the environment has its code, never 1 (SPEC §3): the one mapping from errno to kind.
import { describe, expect, it } from 'vitest';
import { CruxError, environmentError, EXIT_CODES, internalError } from '../../../src/shared/errors';

const sysError = (code: string, path?: string) => Object.assign(new Error(`${code}: failed`), { code, ...(path ? { path } : {}) });

describe('environmentError', () => {
  it('gives permission 5 and space or I/O 75, naming the path', () => {
    const cases: [string, number, RegExp][] = [
      ['EACCES', 5, /^permission denied: \/d\/sessions.jsonl \(EACCES\)$/],
      ['EPERM', 5, /^permission denied: \/d\/sessions.jsonl \(EPERM\)$/],
      ['EROFS', 5, /^read-only file system: \/d\/sessions.jsonl \(EROFS\)$/],
      ['ENOSPC', 75, /^the disk is full: cannot write \/d\/sessions.jsonl \(ENOSPC\)$/],
      ['EDQUOT', 75, /^the disk quota is exceeded: cannot write \/d\/sessions.jsonl \(EDQUOT\)$/],
      ['EFBIG', 75, /^the file is too large for this file system: cannot write \/d\/sessions.jsonl \(EFBIG\)$/],
      ['EIO', 75, /^I\/O error: \/d\/sessions.jsonl \(EIO\)$/],
      ['EMFILE', 75, /^too many open files: \/d\/sessions.jsonl \(EMFILE\)$/],
    ];
    for (const [code, exit, message] of cases) {
      const error = environmentError(sysError(code, '/d/sessions.jsonl'))!;
      expect(error, code).toBeInstanceOf(CruxError);
      expect(EXIT_CODES[error.kind], code).toBe(exit);
      expect(error.message, code).toMatch(message);
    }
  });

  it('prefers the path the caller names, and leaves everything else alone', () => {
    expect(environmentError(sysError('EACCES', '/x'), '/d/keys/handoff.key')!.message).toContain('/d/keys/handoff.key');
    expect(environmentError(sysError('ENOENT', '/x'))).toBeUndefined();
    expect(environmentError(new Error('plain'))).toBeUndefined();
    expect(environmentError(new CruxError('conflict', 'no'))).toBeUndefined();
  });

  it('is what the top-level catch reports for a stray errno error: never exit 1', () => {
    expect(internalError(sysError('EIO', '/d/cases.jsonl'), false).kind).toBe('io_error');
    expect(internalError(sysError('EACCES', '/d'), false).kind).toBe('permission_denied');
    expect(internalError(new TypeError('x is undefined'), false).kind).toBe('internal');
  });
});
