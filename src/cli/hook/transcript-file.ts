// Reading the transcript a hook payload names (Claude Code's JSONL at transcript_path): streamed through the
// domain's fold in chunks, never held whole, and refused past a size bound; or only its tail, for the last prompt.
import { fs } from '../../shared/fs';
import { envCount } from '../parse';
import { promptIn, TranscriptFold } from '../../domain/transcript/turns';

/** A transcript larger than this (CRUX_MAX_TRANSCRIPT_BYTES) is not read: nothing is recorded from it. */
const DEFAULT_MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024;
/** How much of a transcript's end SessionStart reads for the last prompt. */
const TAIL_BYTES = 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;
const TAIL_CHUNK = 64 * 1024;

export const maxTranscriptBytes = (env: NodeJS.ProcessEnv) => envCount(env, 'CRUX_MAX_TRANSCRIPT_BYTES', DEFAULT_MAX_TRANSCRIPT_BYTES)!;

/** The folded transcript, or why nothing can be recorded from it (one line for stderr). */
export type TranscriptRead = { readonly fold: TranscriptFold } | { readonly refused: string };

function openTranscript(path: string): { fd: number; size: number } | { refused: string } {
  let fd: number;
  try {
    // Non-blocking: a FIFO (or a device) at the path must not hang the hook until a writer comes; fstat refuses it.
    fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
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
    // Bytes after the last newline read so far: the start of a line that goes on in the next chunk.
    let carry: Buffer[] = [];
    let line = 0;
    const take = (text: string): string | undefined => {
      line += 1;
      if (text.trim() === '') return undefined;
      try {
        fold.add(JSON.parse(text));
        return undefined;
      } catch {
        return `line ${line} of the transcript ${path} is not JSON`;
      }
    };
    for (let read = 0; read < size; ) {
      const n = fs.readSync(fd, chunk, 0, Math.min(chunk.length, size - read), read);
      if (n === 0) break;
      read += n;
      const end = chunk.lastIndexOf(10, n - 1);
      if (end === -1) {
        carry.push(Buffer.from(chunk.subarray(0, n)));
        continue;
      }
      // A newline byte is never inside a UTF-8 sequence: the chunk up to its last one decodes whole, at once.
      const bytes = carry.length === 0 ? chunk.subarray(0, end) : Buffer.concat([...carry, chunk.subarray(0, end)]);
      carry = end + 1 < n ? [Buffer.from(chunk.subarray(end + 1, n))] : [];
      for (const text of bytes.toString('utf8').split('\n')) {
        const bad = take(text);
        if (bad !== undefined) return { refused: bad };
      }
    }
    if (carry.length > 0 && take(Buffer.concat(carry).toString('utf8')) !== undefined) {
      return { refused: `the transcript ${path} ends in a partial line (line ${line})` };
    }
    return { fold };
  } finally {
    fs.closeSync(fd);
  }
}

type Prompt = NonNullable<ReturnType<typeof promptIn>>;

/** The last prompt the user typed (see lastPromptsOf), or undefined. */
export const lastPromptOf = (path: string): Prompt | undefined => lastPromptsOf(path, 1)?.prompts[0];

/**
 * The last `count` prompts the user typed, newest first, from the transcript's last TAIL_BYTES read backwards a
 * TAIL_CHUNK at a time (the last prompts are usually near the end), and whether that reached the file's start
 * (then there are no others); undefined when the file cannot be read.
 */
export function lastPromptsOf(path: string, count: number): { prompts: Prompt[]; whole: boolean } | undefined {
  const opened = openTranscript(path);
  if ('refused' in opened) return undefined;
  const { fd, size } = opened;
  const prompts: Prompt[] = [];
  try {
    const floor = Math.max(0, size - TAIL_BYTES);
    // The bytes of the lines not looked at yet that begin before `pos` and end after it.
    let rest = Buffer.alloc(0);
    for (let pos = size; pos > floor; ) {
      const from = Math.max(floor, pos - TAIL_CHUNK);
      const chunk = Buffer.allocUnsafe(pos - from);
      let got = 0;
      while (got < chunk.length) {
        const n = fs.readSync(fd, chunk, got, chunk.length - got, from + got);
        if (n === 0) return undefined;
        got += n;
      }
      pos = from;
      const bytes = rest.length === 0 ? chunk : Buffer.concat([chunk, rest]);
      // Before the first newline is part of a line that began earlier (unless the file starts here).
      const first = pos === 0 ? -1 : bytes.indexOf(10);
      if (first === -1 && pos > 0) {
        rest = bytes;
        continue;
      }
      rest = bytes.subarray(0, first + 1);
      const lines = bytes.toString('utf8', first + 1).split('\n');
      for (let i = lines.length - 1; i >= 0; i--) {
        const prompt = promptOfText(lines[i]!);
        if (prompt !== undefined && prompts.push(prompt) === count) return { prompts, whole: false };
      }
    }
    return { prompts, whole: floor === 0 };
  } finally {
    fs.closeSync(fd);
  }
}

function promptOfText(text: string): ReturnType<typeof promptIn> {
  // Only user lines can hold a prompt: most lines are passed over without being parsed.
  if (!text.includes('"user"')) return undefined;
  try {
    return promptIn(JSON.parse(text));
  } catch {
    return undefined;
  }
}
