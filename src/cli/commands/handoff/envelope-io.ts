// Reading a package (a file or stdin) and writing an envelope (stdout or a private file).
import { fs } from '../../../shared/fs';
import { dirname, resolve } from 'node:path';
import { readInputFile, type Context } from '../../context';
import { writeStdout } from '../../../output/stdout';
import { invalid } from '../../../shared/errors';
import { writePrivateFile } from '../../../journal/key-files';
import { encodeEnvelope, MAX_ENVELOPE_BYTES, type Envelope } from '../../../domain/handoff/envelope';

/** Refuses an --out path whose directory is missing before anything is minted. */
export function checkOutPath(out: string | undefined): string | undefined {
  if (out === undefined) return undefined;
  const path = resolve(out);
  if (!fs.existsSync(dirname(path)) || !fs.statSync(dirname(path)).isDirectory()) throw invalid(`--out ${out}: no such directory ${dirname(path)}`);
  if (fs.existsSync(path) && fs.statSync(path).isDirectory()) throw invalid(`--out ${out} is a directory`);
  return path;
}

export function writeEnvelope(ctx: Context, envelope: Envelope, out: string | undefined): void {
  const text = `${encodeEnvelope(envelope)}\n`;
  if (out !== undefined) writePrivateFile(out, text);
  // The envelope is the product: printed in both modes (it is itself the JSON document) and under --quiet (SPEC §8),
  // unless it went to a file.
  if (out === undefined || ctx.json) writeStdout(text);
}

export const readPackage = (file: string | undefined) => readInputFile(file ?? '-', MAX_ENVELOPE_BYTES);
