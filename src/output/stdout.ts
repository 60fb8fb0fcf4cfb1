// Writing to stdout and stderr with plain write(2) calls: touching process.stdout loads Node's stream machinery,
// which costs ~4 ms per invocation; a closed pipe (`crux … | head`) ends the output quietly.
import { writeSync } from 'node:fs';

const pause = new Int32Array(new SharedArrayBuffer(4));

export function writeStdout(text: string | Uint8Array): void {
  writeFd(1, text);
}

export function writeStderr(text: string): void {
  writeFd(2, text);
}

function writeFd(fd: number, text: string | Uint8Array): void {
  const buf = typeof text === 'string' ? Buffer.from(text) : text;
  let offset = 0;
  while (offset < buf.length) {
    try {
      offset += writeSync(fd, buf, offset, buf.length - offset);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return;
      // A non-blocking pipe that is full: wait a moment for the reader.
      if (code === 'EAGAIN') Atomics.wait(pause, 0, 0, 2);
      else throw error;
    }
  }
}
