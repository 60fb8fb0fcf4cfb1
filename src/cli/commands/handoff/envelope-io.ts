// Reading a package (a file or stdin) and writing an envelope (stdout, or --out as `>` writes: out-file.ts).
import { readInputFile, type Context } from '../../context';
import { writeStdout } from '../../../output/stdout';
import { resolveOut, writeOut, type OutTarget } from '../../out-file';
import { encodeEnvelope, MAX_ENVELOPE_BYTES, type Envelope } from '../../../domain/handoff/envelope';

/** `--out`, checked before anything is minted (undefined: stdout). */
export const checkOutPath = (out: string | undefined): OutTarget | undefined => (out === undefined ? undefined : resolveOut(out));

export function writeEnvelope(ctx: Context, envelope: Envelope, out: OutTarget | undefined): void {
  const text = `${encodeEnvelope(envelope)}\n`;
  const toFile = out?.kind === 'file';
  if (toFile) writeOut(out, text);
  // The envelope is the product: printed in both modes (it is itself the JSON document) and under --quiet (SPEC §8),
  // unless it went to a file.
  if (!toFile || ctx.json) writeStdout(text);
}

export const readPackage = (file: string | undefined) => readInputFile(file ?? '-', MAX_ENVELOPE_BYTES);
