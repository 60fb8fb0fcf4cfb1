// The judgements behind several hosts and replication (SPEC §11), without a server: which server fits
// target_session_attrs (libpq's rules), what doctor says an acknowledgement promises, and what a long-lived
// process remembers of the chains it saw. The servers themselves are in test/reliability/pg-failover.test.ts.
import { describe, expect, it } from 'vitest';
import { fits, standbyNote, verdict, type ServerFacts } from '../../../src/journal/pg/pg-server';
import { SeenHeads } from '../../../src/journal/pg/pg-seen-heads';
import type { Sql } from '../../../src/journal/pg/client';

const primary = { standby: false, readOnly: false };
const standby = { standby: true, readOnly: true };
const readOnlyPrimary = { standby: false, readOnly: true };

describe('fits (target_session_attrs)', () => {
  it('follows libpq: read-write wants writes, primary wants no recovery, any takes the first', () => {
    const table: [string, boolean, boolean, boolean][] = [
      // attrs, primary, standby, a primary with default_transaction_read_only
      ['any', true, true, true],
      ['read-write', true, false, false],
      ['read-only', false, true, true],
      ['primary', true, false, true],
      ['standby', false, true, false],
      ['prefer-standby', false, true, false],
    ];
    for (const [attrs, p, s, r] of table) {
      expect([fits(attrs as any, primary), fits(attrs as any, standby), fits(attrs as any, readOnlyPrimary)], attrs).toEqual([p, s, r]);
    }
  });

  it("a standby's note gives its replay lag, or says it cannot tell", () => {
    const facts = (lag: number | null): ServerFacts => ({
      address: { host: 'db2', port: 5432, name: 'db2:5432' },
      ...standby,
      identity: 'x',
      lagSeconds: lag,
    });
    expect(standbyNote('postgres://db2/x', facts(0.42))).toMatch(/reading from a standby, db2:5432: .* committed on the primary 0\.4 s ago/);
    expect(standbyNote('postgres://db2/x', facts(125.2))).toMatch(/125 s ago/);
    expect(standbyNote('postgres://db2/x', facts(null))).toMatch(/has replayed no transaction since it started/);
  });
});

describe('verdict (doctor: is an acknowledged write replicated?)', () => {
  const base = {
    server: 'db1:5432',
    role: 'primary' as const,
    synchronous_commit: 'on',
    synchronous_standby_names: '*',
    standbys: [{ name: 'walreceiver', state: 'streaming', sync_state: 'sync' }],
    replay_lag_seconds: null,
  };

  it('replicated with a synchronous standby connected and synchronous_commit waiting for it', () => {
    expect(verdict(base)).toMatchObject({
      replicated: true,
      summary: expect.stringMatching(/replicated: synchronous_commit on, synchronous standby\(s\) walreceiver/),
    });
    expect(verdict({ ...base, synchronous_commit: 'remote_apply', standbys: [{ name: 'a', state: 'streaming', sync_state: 'quorum' }] }).replicated).toBe(true);
  });

  it('not replicated: no synchronous_standby_names, synchronous_commit local or off, or no synchronous standby connected', () => {
    expect(verdict({ ...base, synchronous_standby_names: '', standbys: [{ name: 'w', state: 'streaming', sync_state: 'async' }] })).toMatchObject({
      replicated: false,
      summary: expect.stringMatching(/synchronous_standby_names is empty \(1 asynchronous standby\(s\) stream from it\)/),
    });
    expect(verdict({ ...base, synchronous_commit: 'local' })).toMatchObject({
      replicated: false,
      summary: expect.stringMatching(/synchronous_commit is local/),
    });
    expect(verdict({ ...base, standbys: [] })).toMatchObject({
      replicated: false,
      summary: expect.stringMatching(/no synchronous standby is connected: commits wait/),
    });
  });

  it('cannot tell when pg_stat_replication hides its details, or on a standby', () => {
    expect(verdict({ ...base, standbys: [{ name: 'w', state: null, sync_state: null }] })).toMatchObject({
      replicated: null,
      summary: expect.stringMatching(/pg_monitor/),
    });
    expect(verdict({ ...base, role: 'standby', replay_lag_seconds: 1.5 })).toMatchObject({
      replicated: null,
      summary: expect.stringMatching(/a standby, read-only .*1\.5 s ago/),
    });
  });
});

describe('SeenHeads', () => {
  /** A server whose journal ends at `head` and holds `at` at the seq asked for. */
  const server = (head: { seq: string; h: string } | null, at: string | null) =>
    Object.assign(async () => [], { unsafe: async () => [{ seq: head?.seq ?? null, head: head?.h ?? null, h: at }] }) as unknown as Sql;
  const facts = (name: string): ServerFacts => ({
    address: { host: name, port: 5432, name: `${name}:5432` },
    standby: false,
    readOnly: false,
    identity: name,
    lagSeconds: null,
  });

  it('counts the records gone exactly when the new head is one it saw, else at least; nothing when the chain holds', async () => {
    const seen = new SeenHeads();
    seen.saw('sessions.jsonl', { seq: 1, h: 'a' });
    seen.saw('sessions.jsonl', { seq: 4, h: 'd' });
    seen.saw('sessions.jsonl', { seq: 3, h: 'c' }); // an older read: the longest stays
    const [exact] = await seen.verify(server({ seq: '1', h: 'a' }, null), 's', 'postgres://db', facts('db1'), facts('db2'));
    expect(exact).toMatch(
      /^postgres:\/\/db sessions\.jsonl: 3 record\(s\) this process saw are gone: the journal ends at record 1 on db2:5432.*before: db1:5432/,
    );
    // Forgotten once said: the view is rebuilt from the server.
    expect(await seen.verify(server(null, null), 's', 'x', facts('a'), facts('b'))).toEqual([]);
    seen.saw('sessions.jsonl', { seq: 4, h: 'd' });
    expect((await seen.verify(server({ seq: '2', h: 'new' }, null), 's', 'x', facts('a'), facts('b')))[0]).toMatch(/: at least 2 record\(s\)/);
    seen.saw('sessions.jsonl', { seq: 4, h: 'd' });
    expect((await seen.verify(server({ seq: '6', h: 'f' }, 'other'), 's', 'x', facts('a'), facts('b')))[0]).toMatch(
      /at least 1 record .*record 4 on b:5432, .* is not the one this process saw/,
    );
    seen.saw('sessions.jsonl', { seq: 4, h: 'd' });
    expect(await seen.verify(server({ seq: '6', h: 'f' }, 'd'), 's', 'x', facts('a'), facts('b'))).toEqual([]);
    seen.saw('sessions.jsonl', { seq: 2, h: 'b' });
    expect((await seen.verify(server(null, null), 's', 'x', facts('a'), facts('b')))[0]).toMatch(/: 2 record\(s\) .*ends at record 0/);
  });

  it('verifies on arrival at another primary only: not at the first connection, the same primary, a standby, or with nothing seen', async () => {
    const seen = new SeenHeads();
    let asked = 0;
    const gone = Object.assign(async () => [], {
      unsafe: async () => {
        asked += 1;
        return [{ seq: '1', head: 'a', h: null }];
      },
    }) as unknown as Sql;
    expect(await seen.arrived(gone, 's', 'x', facts('a'))).toEqual([]);
    expect(await seen.arrived(gone, 's', 'x', facts('b'))).toEqual([]); // nothing seen yet
    seen.saw('sessions.jsonl', { seq: 4, h: 'd' });
    expect(await seen.arrived(gone, 's', 'x', facts('b'))).toEqual([]);
    expect(await seen.arrived(gone, 's', 'x', { ...facts('c'), standby: true })).toEqual([]);
    expect(asked).toBe(0);
    const [warning] = await seen.arrived(gone, 's', 'x', facts('c'));
    expect(warning).toMatch(/^x sessions\.jsonl: at least 3 record\(s\) this process saw are gone: .* on c:5432, .*before: b:5432/);
    expect(asked).toBe(1);
  });
});
