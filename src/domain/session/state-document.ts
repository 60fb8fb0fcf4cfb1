// A session's state document: validated as JSON, then kept as the exact bytes it arrived as.
import { isUtf8 } from 'node:buffer';
import { invalid } from '../../shared/errors';

export const DEFAULT_MAX_STATE_BYTES = 1024 * 1024;

/** Returns the document's text, byte-for-byte equal to `bytes`, or refuses it (exit 5). */
export function acceptStateDocument(bytes: Uint8Array, maxBytes: number): string {
  if (bytes.length > maxBytes) {
    throw invalid(`the state is ${bytes.length} bytes, over the limit of ${maxBytes}`, 'raise CRUX_MAX_STATE_BYTES, or store less');
  }
  if (bytes.length === 0) throw invalid('the state is empty: give a JSON document');
  if (!isUtf8(bytes)) throw invalid('the state is not valid UTF-8 text');
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) throw invalid('the state starts with a byte-order mark; JSON must not');
  try {
    JSON.parse(text);
  } catch (error) {
    throw invalid(`the state is not valid JSON: ${(error as Error).message}`);
  }
  return text;
}
