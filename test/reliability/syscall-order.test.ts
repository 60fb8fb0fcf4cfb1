// The durability protocol as the kernel sees it (strace, "ALICE-lite"): a write is fsynced before crux reports
// success, a new file's directory is fsynced, a rewrite fsyncs its temp file before the rename and the
// directory after it, and a torn tail reaches quarantine durably before it is cut off the journal.
// Needs strace: where it is missing the suite is skipped (a failure under CRUX_REQUIRE_TOOLS=1, as in CI). A call that another
// thread interrupted is joined up again (strace.ts): reading single lines lost one now and then.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { titled } from '../helpers/tools';
import { noStrace, straceCrux } from './strace';
import { TIMEOUT } from './harness';

interface Call {
  name: string;
  path?: string;
  to?: string;
  fd?: number;
  text: string;
}

/** Runs crux under strace and returns the main thread's file calls, with fds resolved to paths. */
function trace(dataDir: string, args: string[]): Call[] {
  const { calls: all, main } = straceCrux(dataDir, args, { trace: 'openat,write,pwrite64,fsync,fdatasync,rename,renameat,renameat2,ftruncate,close' });
  const fds = new Map<number, string>();
  const calls: Call[] = [];
  for (const { pid, name, args: argText, result, text } of all) {
    if (pid !== main) continue;
    const firstFd = Number(/^(\d+)/.exec(argText)?.[1]);
    if (name === 'openat') {
      const path = /"([^"]*)"/.exec(argText)?.[1];
      if (result >= 0 && path) fds.set(result, path);
      calls.push({ name, path, text });
    } else if (name.startsWith('rename')) {
      const [from, to] = [...argText.matchAll(/"([^"]*)"/g)].map((x) => x[1]);
      calls.push({ name: 'rename', path: from, to, text });
    } else {
      calls.push({ name, fd: firstFd, path: fds.get(firstFd), text });
      if (name === 'close') fds.delete(firstFd);
    }
  }
  return calls;
}

const index = (calls: Call[], pred: (c: Call) => boolean, what: string) => {
  const i = calls.findIndex(pred);
  if (i < 0) throw new Error(`no ${what} in the trace:\n${calls.map((c) => c.text).join('\n')}`);
  return i;
};

describe.skipIf(noStrace !== undefined)(titled('syscall order (strace)', noStrace), { timeout: TIMEOUT }, () => {
  it('first write: file written, fdatasync, directory fsync, then success is printed', () => {
    const dir = freshDataDir();
    const journal = join(dir, 'sessions.jsonl');
    const calls = trace(dir, ['session', 'put', 'a', '{"n":1}']);
    const write = index(calls, (c) => c.path === journal && /write/.test(c.name), 'journal write');
    const sync = index(calls, (c) => c.path === journal && /f(data)?sync/.test(c.name), 'journal fsync');
    const dirSync = calls.findIndex((c, i) => i > sync && c.path === dir && c.name === 'fsync');
    const printed = index(calls, (c) => c.name === 'write' && c.fd === 1, 'output');
    expect(write).toBeLessThan(sync);
    expect(dirSync).toBeGreaterThan(sync);
    expect(dirSync).toBeLessThan(printed);
  });

  it('later writes: fdatasync of the journal before success is printed', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 'a', '{}'])).exitCode).toBe(0);
    const journal = join(dir, 'sessions.jsonl');
    const calls = trace(dir, ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o']);
    const cases = join(dir, 'cases.jsonl');
    const write = index(calls, (c) => c.path === cases && /write/.test(c.name), 'journal write');
    const sync = index(calls, (c) => c.path === cases && /f(data)?sync/.test(c.name), 'journal fsync');
    const printed = index(calls, (c) => c.name === 'write' && c.fd === 1, 'output');
    expect(write).toBeLessThan(sync);
    expect(sync).toBeLessThan(printed);
    const again = trace(dir, ['session', 'put', 'a', '{"n":2}']);
    expect(index(again, (c) => c.path === journal && /f(data)?sync/.test(c.name), 'journal fsync')).toBeLessThan(
      index(again, (c) => c.name === 'write' && c.fd === 1, 'output'),
    );
  });

  it('compaction: temp written and fsynced, renamed over the journal, directory fsynced, then success is printed', async () => {
    const dir = freshDataDir();
    for (const n of [1, 2, 3]) expect((await crux(dir, ['session', 'put', 'a', `{"n":${n}}`])).exitCode).toBe(0);
    const journal = join(dir, 'sessions.jsonl');
    const calls = trace(dir, ['journal', 'compact']);
    const rename = index(calls, (c) => c.name === 'rename' && c.to === journal, 'rename over the journal');
    const temp = calls[rename]!.path!;
    const tempWrite = index(calls, (c) => c.path === temp && /write/.test(c.name), 'temp write');
    const tempSync = index(calls, (c) => c.path === temp && /f(data)?sync/.test(c.name), 'temp fsync');
    const dirSync = calls.findIndex((c, i) => i > rename && c.path === dir && c.name === 'fsync');
    const printed = index(calls, (c) => c.name === 'write' && c.fd === 1, 'output');
    expect(tempWrite).toBeLessThan(tempSync);
    expect(tempSync).toBeLessThan(rename);
    expect(dirSync).toBeGreaterThan(rename);
    expect(dirSync).toBeLessThan(printed);
  });

  it('a torn tail is written to quarantine and fsynced (file and directory) before the journal is truncated', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 'a', '{}'])).exitCode).toBe(0);
    const journal = join(dir, 'sessions.jsonl');
    fs.appendFileSync(journal, '{"v":1,"seq":2,');
    const calls = trace(dir, ['session', 'put', 'b', '{}']);
    const qWrite = index(calls, (c) => !!c.path?.includes('/quarantine/') && /write/.test(c.name), 'quarantine write');
    const qSync = index(calls, (c) => !!c.path?.includes('/quarantine/') && /f(data)?sync/.test(c.name), 'quarantine fsync');
    const qDirSync = index(calls, (c) => c.path === join(dir, 'quarantine') && c.name === 'fsync', 'quarantine dir fsync');
    const truncate = index(calls, (c) => c.path === journal && c.name === 'ftruncate', 'truncate');
    expect(qWrite).toBeLessThan(qSync);
    expect(qSync).toBeLessThan(truncate);
    expect(qDirSync).toBeLessThan(truncate);
  });
});
