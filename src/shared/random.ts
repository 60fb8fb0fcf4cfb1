// Random bytes for new ids (cases, handoffs), from the kernel's /dev/urandom: three system calls, where
// node:crypto's randomBytes first costs loading node:crypto (~3 ms, ~9 M instructions: a `case record` spent a
// fifth of its time there). Where /dev/urandom is not a character device (a sandbox without /dev, something
// planted in its place), node:crypto gives them. Not for keys: those come from node:crypto (domain/handoff).
import { fs } from './fs';

const URANDOM = '/dev/urandom';

function fromDevice(count: number, device: string): Buffer | undefined {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO in its place must not block the open.
    fd = fs.openSync(device, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    if (!fs.fstatSync(fd).isCharacterDevice()) return undefined;
    const bytes = Buffer.allocUnsafe(count);
    let got = 0;
    while (got < count) {
      const n = fs.readSync(fd, bytes, got, count - got, null);
      if (n <= 0) return undefined;
      got += n;
    }
    return bytes;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** `count` random bytes (from `device`, a parameter for its tests). */
export function randomBytes(count: number, device = URANDOM): Buffer {
  return fromDevice(count, device) ?? (require('node:crypto') as typeof import('node:crypto')).randomBytes(count);
}
