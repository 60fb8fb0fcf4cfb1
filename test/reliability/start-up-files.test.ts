// What a fast command opens besides its data (docs/performance.md, Start-up): its own launcher and one bundle with its code
// cache, and nothing a start could do without — no package.json (Node reads one above a main script not named
// .cjs: bin/crux links to bin/pinned/crux.cjs), no time zone (a first Date#toISOString sets up ICU's: shared/time.ts
// spells the UTC fields itself), no other bundle. Each of these costs every call.
import { describe, expect, it } from 'vitest';
import { crux, freshDataDir } from '../helpers/cli';
import { titled } from '../helpers/tools';
import { noStrace, straceCrux } from './strace';

const LINES: readonly { args: string[]; bundle: string }[] = [
  { args: ['session', 'get', 's'], bundle: 'fast-read.cjs' },
  { args: ['session', 'put', 's', '{"a":2}'], bundle: 'fast.cjs' },
  { args: ['--json', 'session', 'put', 'n', '{"a":1}', '--ttl', '2h'], bundle: 'fast.cjs' },
  { args: ['case', 'record', '--task', 'ship it', '--action', 'ran', '--outcome', 'ok', '--quiet'], bundle: 'fast-record.cjs' },
  { args: ['session', 'close', 'c'], bundle: 'fast.cjs' },
  { args: ['--json', 'session', 'list', '--stranded', '--limit', '24'], bundle: 'fast-list.cjs' },
  { args: ['--json', 'case', 'retrieve', 'ship'], bundle: 'fast-retrieve.cjs' },
];

describe.skipIf(noStrace !== undefined)(titled('a fast command’s start', noStrace), () => {
  it('opens its launcher, one bundle and its cache: no package.json, no time zone, no other bundle', async () => {
    const dir = freshDataDir();
    for (const id of ['s', 'c']) expect((await crux(dir, ['session', 'put', id, '{"a":1}'])).exitCode).toBe(0);
    for (const { args, bundle } of LINES) {
      const { calls } = straceCrux(dir, args, { trace: 'openat,open,readlink,statx,newfstatat,stat,lstat' });
      const paths = calls.map((c) => /"([^"]*)"/.exec(c.args)?.[1] ?? '').filter((p) => p !== '');
      const line = args.join(' ');
      expect(
        paths.filter((p) => /package\.json$/.test(p)),
        line,
      ).toEqual([]);
      expect(
        paths.filter((p) => /localtime|zoneinfo/.test(p)),
        line,
      ).toEqual([]);
      const bundles = [...new Set(paths.filter((p) => /\/dist\/[^/]+\.cjs$/.test(p)).map((p) => p.slice(p.lastIndexOf('/') + 1)))];
      expect(bundles, line).toEqual([bundle]);
      expect(
        paths.some((p) => /\/bin\/(pinned\/)?crux\.cjs$/.test(p)),
        line,
      ).toBe(true);
    }
  });

  // The fast bundles hold no PostgreSQL engine; a line that may name such a store (--store, CRUX_STORE) runs from
  // their twins with it (fast-read-pg.cjs, fast-pg.cjs, fast-record-pg.cjs, fast-list-pg.cjs, fast-retrieve-pg.cjs), which open the client library only for
  // such a store.
  it('runs a line that may name a PostgreSQL store from the twin with its engine, the client library only for one', () => {
    const dir = freshDataDir();
    const bundlesOf = (args: string[], env: Record<string, string> = {}) => {
      const { calls } = straceCrux(null, args, { trace: 'openat,open', env, anyExit: true });
      const paths = calls.map((c) => /"([^"]*)"/.exec(c.args)?.[1] ?? '').filter((p) => /\/dist\/[^/]+\.cjs$/.test(p));
      return [...new Set(paths.map((p) => p.slice(p.lastIndexOf('/') + 1)))];
    };
    const nowhere = 'postgres://crux@127.0.0.1:1/none?connect_timeout=2';
    expect(bundlesOf(['--store', nowhere, 'session', 'get', 's'])).toEqual(['fast-read-pg.cjs', 'pg.cjs']);
    expect(bundlesOf([`--store=${nowhere}`, 'session', 'put', 's', '{}'])).toEqual(['fast-pg.cjs', 'pg.cjs']);
    expect(bundlesOf(['--json', 'session', 'list', '--limit', '5'], { CRUX_STORE: nowhere })).toEqual(['fast-list-pg.cjs', 'pg.cjs']);
    expect(bundlesOf(['--json', 'case', 'retrieve', 'x'], { CRUX_STORE: nowhere })).toEqual(['fast-retrieve-pg.cjs', 'pg.cjs']);
    // CRUX_STORE set, --data-dir given: a data directory, run by the twin without the client library.
    expect(bundlesOf(['--data-dir', dir, 'session', 'get', 's'], { CRUX_STORE: nowhere })).toEqual(['fast-read-pg.cjs']);
    expect(bundlesOf(['--data-dir', dir, 'session', 'get', 's'])).toEqual(['fast-read.cjs']);
    expect(bundlesOf(['--data-dir', dir, 'session', 'put', 's', '{}'], { CRUX_STORE: nowhere })).toEqual(['fast-pg.cjs']);
    expect(bundlesOf(['--data-dir', dir, 'case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o'], { CRUX_STORE: nowhere })).toEqual([
      'fast-record-pg.cjs',
    ]);
  });
});
