// A probe whose connection the listener's death resets before the connect is reported (lock-socket.ts): connect(2)
// queued it in the dying listener's backlog, and libuv reports ECONNRESET from SO_ERROR on the next turn. That is
// a death (or a release), never a busy socket: the probe asks once more and answers refused (or gone), so that a
// waiter removes a dead waiter's ticket instead of passing over it (lock-queue's SIGKILL test failed so in CI).
import * as fs from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/cli';
import { socketAddress } from '../../../src/journal/dir/lock/lock-fs';
import { probe } from '../../../src/journal/dir/lock/lock-socket';

async function listening(path: string): Promise<net.Server> {
  const server = net.createServer({ pauseOnConnect: true }, (c) => c.on('error', () => {}));
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return server;
}

describe("a probe reset by the listener's death", () => {
  it('answers refused where the socket stays behind (a killed contender), not alive', async () => {
    const dir = tempDir();
    const path = join(dir, 's.1.0');
    const server = await listening(path);
    const address = socketAddress(dir);
    try {
      // connect(2) runs inside probe, synchronously; the listener then dies before the event loop turns.
      const seen = probe(address, 's.1.0');
      // A killed process leaves its socket file (libuv's close unlinks it: keep a second name and put it back).
      fs.linkSync(path, join(dir, 'keep'));
      server.close();
      fs.renameSync(join(dir, 'keep'), path);
      expect((await seen).answer).toBe('refused');
    } finally {
      address.close();
    }
  });

  it('answers gone where the socket went with it (a release)', async () => {
    const dir = tempDir();
    const server = await listening(join(dir, 's.1.0'));
    const address = socketAddress(dir);
    try {
      const seen = probe(address, 's.1.0');
      server.close();
      expect((await seen).answer).toBe('gone');
    } finally {
      address.close();
    }
  });
});
