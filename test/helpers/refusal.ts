// What a domain function answers, as one comparable string: `ok`, or a refusal's exit code and message.
import { CruxError } from '../../src/shared/errors';

export function refusalOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof CruxError) return `${e.exitCode} ${e.message}`;
    throw e;
  }
  return 'ok';
}
