// b3sum (the BLAKE3 team's CLI, Debian package b3sum) as an independent BLAKE3 for tests. Never skipped:
// when it is missing, the tests that need it fail with this message.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function run(args: string[], input: Uint8Array, stdin?: Uint8Array): string {
  const dir = mkdtempSync(join(tmpdir(), 'crux-b3-'));
  try {
    const file = join(dir, 'input');
    writeFileSync(file, input);
    try {
      return execFileSync('b3sum', [...args, '--no-names', file], { input: stdin, encoding: 'utf8' }).trim();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new Error('b3sum is not installed: `apt-get install -y b3sum` (tests that need it fail, never skip)');
      }
      throw error;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Hex BLAKE3 of `input`. */
export const b3hash = (input: Uint8Array): string => run([], input);
/** Hex keyed BLAKE3 of `input` (the key goes in on stdin, 32 raw bytes). */
export const b3keyed = (key: Uint8Array, input: Uint8Array): string => run(['--keyed'], input, key);
/** Hex BLAKE3 derive-key of key material `input` with `context`. */
export const b3derive = (context: string, input: Uint8Array): string => run(['--derive-key', context], input);
/** Raw 32 bytes of BLAKE3 of `input` (for keys). */
export const b3raw = (input: Uint8Array): Uint8Array => new Uint8Array(Buffer.from(b3hash(input), 'hex'));
