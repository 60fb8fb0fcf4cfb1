// Reading the transcript a hook payload names (Claude Code's JSONL at transcript_path): streamed through the
// domain's fold in chunks, never held whole, and refused past a size bound; or only its tail, for the last prompt.
import { fs } from '../../shared/fs';
import { envCount } from '../parse';
import { promptIn, TranscriptFold } from '../../domain/transcript/turns';

/** A transcript larger than this (CRUX_MAX_TRANSCRIPT_BYTES) is not read: nothing is recorded from it. */
export const DEFAULT_MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024;
/** How much of a transcript's end SessionStart reads for the last prompt. */
const TAIL_BYTES = 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;

export const maxTranscriptBytes = (env: NodeJS.ProcessEnv) => envCount(env, 'CRUX_MAX_TRANSCRIPT_BYTES', DEFAULT_MAX_TRANSCRIPT_BYTES)!;

/** The folded transcript, or why nothing can be recorded from it (one line for stderr). */
export type TranscriptRead = { readonly fold: TranscriptFold } | { readonly refused: string };

function openTranscript(path: string): { fd: number; size: number } | { refused: string } {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { refused: code === 'ENOENT' ? `no transcript at ${path}` : `cannot read the transcript ${path} (${code})` };
  }
  const stat = fs.fstatSync(fd);
  if (!stat.isFile()) {
    fs.closeSync(fd);
    return { refused: `the transcript ${path} is not a file` };
  }
  return { fd, size: stat.size };
}

/**
 * Streams the transcript through a fold, line by line, up to the size it had when opened (Claude Code may be
 * appending). Any line that is not JSON — a torn last line, a write in progress — records nothing: the next
 * SessionEnd or Stop reads it whole, and the stretch it then records is the same.
 */
export function foldTranscript(path: string, maxBytes: number): TranscriptRead {
  const opened = openTranscript(path);
  if ('refused' in opened) return opened;
  const { fd, size } = opened;
  try {
    if (size > maxBytes) return { refused: `the transcript ${path} is ${size} bytes, over the limit of ${maxBytes} (CRUX_MAX_TRANSCRIPT_BYTES)` };
    const fold = new TranscriptFold();
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(size, 1)));
    let carry: Buffer[] = [];
    let line = 0;
    let read = 0;
    const take = (bytes: Buffer): string | undefined => {
      line += 1;
      const text = bytes.toString('utf8');
      if (text.trim() === '') return undefined;
      try {
        fold.add(JSON.parse(text));
        return undefined;
      } catch {
        return `line ${line} of the transcript ${path} is not JSON`;
      }
    };
    while (read < size) {
      const n = fs.readSync(fd, chunk, 0, Math.min(chunk.length, size - read), read);
      if (n === 0) break;
      read += n;
      let from = 0;
      for (let nl = chunk.indexOf(10, 0); nl !== -1 && nl < n; nl = chunk.indexOf(10, from)) {
        const bytes = carry.length === 0 ? chunk.subarray(from, nl) : Buffer.concat([...carry, chunk.subarray(from, nl)]);
        carry = [];
        const bad = take(bytes);
        if (bad !== undefined) return { refused: bad };
        from = nl + 1;
      }
      if (from < n) carry.push(Buffer.from(chunk.subarray(from, n)));
    }
    if (carry.length > 0) {
      const bad = take(Buffer.concat(carry));
      if (bad !== undefined) return { refused: `the transcript ${path} ends in a partial line (line ${line})` };
    }
    return { fold };
  } finally {
    fs.closeSync(fd);
  }
}

/** The last prompt the user typed, from the transcript's last TAIL_BYTES; undefined when none is there or readable. */
export function lastPromptOf(path: string): string | undefined {
  const opened = openTranscript(path);
  if ('refused' in opened) return undefined;
  const { fd, size } = opened;
  try {
    const start = Math.max(0, size - TAIL_BYTES);
    const tail = Buffer.allocUnsafe(size - start);
    let got = 0;
    while (got < tail.length) {
      const n = fs.readSync(fd, tail, got, tail.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    const lines = tail.subarray(0, got).toString('utf8').split('\n');
    // Reading from the middle of the file, the first line is the end of one that began before the tail.
    for (let i = lines.length - 1; i >= (start === 0 ? 0 : 1); i--) {
      // Only user lines can hold a prompt: most lines are passed over without being parsed.
      if (!lines[i]!.includes('"user"')) continue;
      let value: unknown;
      try {
        value = JSON.parse(lines[i]!);
      } catch {
        continue;
      }
      const prompt = promptIn(value);
      if (prompt !== undefined) return prompt;
    }
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}
