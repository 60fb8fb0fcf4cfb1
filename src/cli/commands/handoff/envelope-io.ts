// Reading a package (a file or stdin) and writing an envelope (stdout, or --out as `>` writes: out-file.ts).
import { readInputFile, type Context } from '../../context';
import { writeStderr, writeStdout } from '../../../output/stdout';
import { committed } from '../../../shared/commit-log';
import { CruxError } from '../../../shared/errors';
import { resolveOut, writeOut, type OutTarget } from '../../out-file';
import { encodeEnvelope, MAX_ENVELOPE_BYTES, type Envelope } from '../../../domain/handoff/envelope';

/** `--out`, checked before anything is minted (undefined: stdout). */
export const checkOutPath = (out: string | undefined): OutTarget | undefined => (out === undefined ? undefined : resolveOut(out));

/**
 * Writes the envelope; returns whether it reached `--out`. A file that cannot be written after the mint was
 * committed (the mint names its `handoffId`) does not turn the mint into a failure (SPEC §3: exit 0, one stderr line saying what was done, and
 * here how to write the envelope again), so that a retrying script does not mint twice.
 */
export function writeEnvelope(ctx: Context, envelope: Envelope, out: OutTarget | undefined, handoffId?: string): boolean {
  const text = `${encodeEnvelope(envelope)}\n`;
  const toFile = out?.kind === 'file';
  let written = true;
  if (toFile) {
    try {
      writeOut(out, text);
    } catch (error) {
      const done = committed();
      if (done.length === 0 || handoffId === undefined || !(error instanceof CruxError)) throw error;
      const again = `crux handoff export ${handoffId} --out ${out.shown}`;
      writeStderr(
        `crux: committed (${done.join('; ')}), but --out could not be written: ${error.message}; the mint is durable, do not repeat it: \`${again}\` writes the envelope again\n`,
      );
      written = false;
    }
  }
  // The envelope is the product: printed in both modes (it is itself the JSON document) and under --quiet (SPEC §8),
  // unless it went to a file.
  if (!toFile || ctx.json) writeStdout(text);
  return written;
}

export const readPackage = (file: string | undefined) => readInputFile(file ?? '-', MAX_ENVELOPE_BYTES);
