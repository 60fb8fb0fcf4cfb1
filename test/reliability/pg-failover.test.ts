// Failover on PostgreSQL, for real (SPEC §11, "Several hosts", "Acknowledged means replicated"): a primary with a
// streaming standby of this suite's own (test/helpers/pg-replica.ts), writers in separate processes naming both
// hosts with target_session_attrs=read-write, each recording what was acknowledged (exit 0); the primary killed
// (`pg_ctl -m immediate`) and the standby promoted at random points; every acknowledged write read back from the
// promoted server, every other exit 75, the chain unbroken. Then a long-lived `crux mcp` across the switch, a
// standby named alone, and an asynchronous standby promoted: the records gone are said. One round in `npm test`,
// two in CI's run (CRUX_TEST_FULL), more under CRUX_STRESS=1. What a process shows (the writers, the racing closers, a
// standby's reads and refusal) runs `bin/crux`; the seeds and checks around them run in-process (run-cli). One
// replica set for the file: the asynchronous suite adds a standby of its own to the primary it finds.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { crux as spawned, FULL, journalRecords, STRESS, tempDir } from '../helpers/cli';
import { startMcp, type McpSession } from '../helpers/mcp';
import { psql } from '../helpers/pg';
import { ReplicaSet, replicaSkipReason } from '../helpers/pg-replica';
import { crux } from '../helpers/run-cli';
import { api, nextChange, startUi } from '../helpers/ui';
import { startShell } from './harness';

const skip = replicaSkipReason();
const ROUNDS = STRESS ? 8 : FULL ? 2 : 1;
const WRITERS = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const schemaName = (prefix: string) => `${prefix}_${randomBytes(5).toString('hex')}`;

/** A writer: puts `r<round>-w<w>-<i>` until told to stop, logging `<i> <exit> <start ms> <end ms>` per put. */
const writer = (url: string, log: string, stop: string, round: number, w: number) => `
  i=0
  while [ ! -e '${stop}' ]; do
    i=$((i+1)); s=$(date +%s%3N)
    "$CRUX" --store '${url}' session put "r${round}-w${w}-$i" "{\\"r\\": ${round}, \\"w\\": ${w}, \\"i\\": $i}" >/dev/null 2>>'${log}.err'
    rc=$?; echo "$i $rc $s $(date +%s%3N)" >>'${log}'
    [ $rc = 0 ] || sleep 0.05
  done`;

interface Put {
  id: string;
  exit: number;
  start: number;
  end: number;
}

const readLog = (log: string, round: number, w: number): Put[] =>
  existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [i, exit, start, end] = line.split(' ').map(Number);
          return { id: `r${round}-w${w}-${i}`, exit: exit!, start: start!, end: end! };
        })
    : [];

/** The sessions a server holds, by id: the state of each put as stored (a replay of the rows, no cache). */
function storedPuts(url: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of journalRecords(url, 'sessions.jsonl')) if (r.ev === 'session.put') out.set(r.data.id, r.data.state);
  return out;
}

// One primary and its synchronous standby for the file (each a server of its own: initdb, a base backup); each
// failover leaves the promoted server as the primary.
const set = new ReplicaSet('sync');
beforeAll(() => {
  if (skip === undefined) set.start();
}, 120_000);
afterAll(() => set.stop());

describe.skipIf(skip !== undefined)(`failover: the primary killed under writers, the synchronous standby promoted${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const open: McpSession[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  it('a standby named alone serves reads saying how far behind it may be, and refuses a write with 75 saying it is read-only', async () => {
    const schema = schemaName('fosb');
    expect((await crux(set.storeUrl(schema), ['session', 'put', 'a', '{"v":1}'])).exitCode).toBe(0);
    set.caughtUp();
    const standby = set.single(set.standby, schema);
    const read = await spawned(standby, ['session', 'get', 'a']);
    expect(read.exitCode, read.stderr).toBe(0);
    expect(read.stdout).toBe('{"v":1}');
    expect(read.stderr).toMatch(
      /reading from a standby, 127\.0\.0\.1:\d+: what it shows may be behind the primary; the last transaction it replayed was committed on the primary [\d.]+ s ago/,
    );
    // crux ui on it serves its reads; its live updates wait for a primary (a standby relays no notices).
    const ui = await startUi(standby);
    try {
      expect((await api(ui, '/api/sessions')).doc.sessions.map((x: any) => x.session_id)).toEqual(['a']);
    } finally {
      ui.proc.kill('SIGTERM');
    }
    expect(String((await ui.proc).stderr)).toMatch(/the server is a standby: the dashboard serves its reads, and its live updates wait for a primary/);
    const write = await spawned(standby, ['session', 'put', 'b', '{}']);
    expect(write.exitCode).toBe(75);
    expect(write.stderr).toMatch(/is read-only on 127\.0\.0\.1:\d+ \(a standby\): it takes no writes; nothing was written/);
    expect(write.stderr).not.toContain(set.password);
    // journal copy --to takes a URL of several hosts too, and what it copies is on the standby as well.
    const source = tempDir('crux-failover-src-');
    expect((await crux(source, ['session', 'put', 'copied', '{"c":1}'])).exitCode).toBe(0);
    const target = schemaName('focopy');
    const copied = await crux(source, ['journal', 'copy', '--to', set.storeUrl(target)]);
    expect(copied.exitCode, copied.stderr).toBe(0);
    set.caughtUp();
    expect(storedPuts(set.single(set.standby, target)).get('copied')).toBe('{"c":1}');
    // Doctor says acknowledged writes are replicated (a note, no warning).
    const doctor = JSON.parse((await crux(set.storeUrl(schema), ['--json', 'doctor'])).stdout);
    expect(doctor.server.replication).toMatchObject({ role: 'primary', synchronous_standby_names: '*', replicated: true });
    expect(doctor.findings.filter((f: any) => f.code === 'replication')).toMatchObject([{ level: 'note' }]);
  });

  it(`${ROUNDS} round(s): every acknowledged write is on the promoted server, every other exit is 75, the chain unbroken`, async () => {
    const schema = schemaName('fo');
    const figures: string[] = [];
    let acknowledgedAll = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      // Round 1 on the standby start() made; each next one on a new standby of the server promoted.
      if (round > 0) set.addStandby();
      const url = set.storeUrl(schema);
      // A long-lived crux mcp beside the writers (first round): it writes before the crash and at its next call
      // after the promotion, to the new primary.
      const mcp = round === 0 ? await startMcp(set.storeUrl(`${schema}_mcp`), [], { env: { CRUX_LOCK_TIMEOUT: '2s' } }) : undefined;
      if (mcp !== undefined) {
        open.push(mcp);
        expect((await mcp.call('session_put', { session_id: 'before', state: { v: 1 } })).isError).toBeFalsy();
      }
      const dir = tempDir('crux-failover-');
      const stop = join(dir, 'stop');
      const logs = Array.from({ length: WRITERS }, (_, w) => join(dir, `w${w}.log`));
      const writers = logs.map((log, w) => startShell(writer(url, log, stop, round, w)));
      // Under load: the writers have been at it a random while when the primary dies.
      await sleep(STRESS ? 1000 + Math.random() * 4000 : 400 + Math.random() * 800);
      set.killPrimary();
      const killedAt = Date.now();
      await sleep(Math.random() * 400);
      if (mcp !== undefined) {
        // Between the crash and the promotion no server takes writes: the call says so (75), naming every host.
        const between = await mcp.call('session_put', { session_id: 'between', state: {} });
        expect(between.structuredContent.error.code).toBe(75);
        expect(between.structuredContent.error.message).toMatch(
          /no server answered as target_session_attrs=read-write asks \(127\.0\.0\.1:\d+: .*; 127\.0\.0\.1:\d+: a standby \(read-only\)\)/,
        );
      }
      set.promote();
      const promotedAt = Date.now();
      if (mcp !== undefined) {
        const after = await mcp.call('session_put', { session_id: 'after', state: { v: 2 } });
        expect(after.isError, JSON.stringify(after)).toBeFalsy();
        expect((await mcp.call('session_get', { session_id: 'before' })).content[0].text).toBe('{"v":1}');
        expect([...storedPuts(set.single(set.primary, `${schema}_mcp`)).keys()].sort()).toEqual(['after', 'before']);
        expect(mcp.stderr()).not.toMatch(/gone/);
      }
      // Until every writer has had a write acknowledged by the new primary (bounded).
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && !logs.every((log, w) => readLog(log, round, w).some((p) => p.exit === 0 && p.start >= promotedAt))) await sleep(50);
      writeFileSync(stop, '');
      await Promise.all(writers.map((c) => c.done));
      const puts = logs.flatMap((log, w) => readLog(log, round, w));
      const exits = new Map<number, number>();
      for (const p of puts) exits.set(p.exit, (exits.get(p.exit) ?? 0) + 1);
      const errors = logs.map((log) => (existsSync(`${log}.err`) ? readFileSync(`${log}.err`, 'utf8') : '')).join('');
      // Every exit is an acknowledgement or a temporary failure that names the hosts and never the password.
      expect(
        [...exits.keys()].filter((code) => code !== 0 && code !== 75),
        errors,
      ).toEqual([]);
      expect(errors).not.toContain(set.password);
      const stored = storedPuts(set.single(set.primary, schema));
      const acknowledged = puts.filter((p) => p.exit === 0);
      const lost = acknowledged.filter((p) => !stored.has(p.id));
      expect(lost.map((p) => p.id)).toEqual([]);
      // Nothing half-written: what is stored is each put's exact state (a 75 whose commit landed is whole too).
      for (const p of puts) {
        const state = stored.get(p.id);
        if (state !== undefined)
          expect(JSON.parse(state)).toEqual({ r: round, w: Number(p.id.split('-w')[1]!.split('-')[0]), i: Number(p.id.split('-').at(-1)) });
      }
      expect(
        logs.every((log, w) => readLog(log, round, w).some((p) => p.exit === 0 && p.start >= promotedAt)),
        'a writer never reached the new primary',
      ).toBe(true);
      // The first write the new primary acknowledged (started before the promotion or after), from the promotion.
      const firstAfter = Math.min(...acknowledged.filter((p) => p.end > killedAt).map((p) => p.end)) - promotedAt;
      acknowledgedAll += acknowledged.length;
      // A 75 whose COMMIT reached the server just before it died: committed whole, not acknowledged (no client can know).
      const landed = puts.filter((p) => p.exit === 75 && stored.has(p.id)).length;
      figures.push(
        `round ${round + 1}: ${acknowledged.length} acknowledged, ${lost.length} lost, ${landed} exit-75 put(s) found committed, exits ${[...exits].map(([c, n]) => `${c}×${n}`).join(' ')}, first write ${firstAfter} ms after promotion`,
      );
    }
    console.log(`failover (synchronous standby):\n  ${figures.join('\n  ')}`);
    expect(acknowledgedAll).toBeGreaterThan(0);
    const check = await crux(set.single(set.primary, schema), ['journal', 'check']);
    expect(check.exitCode, check.stdout + check.stderr).toBe(0);
  }, 180_000);

  it('close stays exactly once across a failover: two closers a session, the primary killed among them, every 75 retried', async () => {
    // After the rounds the promoted server has no standby yet; run alone, the suite's first standby is still there.
    if (set.standby === set.primary) set.addStandby();
    const schema = schemaName('foclose');
    const url = set.storeUrl(schema);
    const ids = Array.from({ length: 6 }, (_, i) => `c${i}`);
    for (const id of ids) expect((await crux(url, ['session', 'put', id, '{}'])).exitCode).toBe(0);
    const close = (id: string) => spawned(url, ['session', 'close', id, '--outcome', 'completed'], { env: { CRUX_LOCK_TIMEOUT: '3s' } });
    // Two closers a session, started together; the primary dies while they run, the standby is promoted.
    const first = Promise.all(ids.flatMap((id) => [close(id), close(id)]));
    await sleep(150 + Math.random() * 300);
    set.killPrimary();
    await sleep(Math.random() * 300);
    set.promote();
    const runs = await first;
    expect(runs.map((r) => r.exitCode).filter((code) => code !== 0 && code !== 75)).toEqual([]);
    // A closer told 75 tries again, as a script would: it closes, or finds the session closed (0, exactly once).
    for (const [i, r] of runs.entries()) if (r.exitCode === 75) expect((await close(ids[Math.floor(i / 2)]!)).exitCode).toBe(0);
    const closes = journalRecords(set.single(set.primary, schema), 'sessions.jsonl').filter((r) => r.ev === 'session.closed');
    expect(closes.map((r) => r.data.id).sort()).toEqual([...ids].sort());
    const check = await crux(set.single(set.primary, schema), ['journal', 'check']);
    expect(check.exitCode, check.stdout + check.stderr).toBe(0);
  }, 120_000);
});

describe.skipIf(skip !== undefined)(`failover to an asynchronous standby${skip ? ` (skipped: ${skip})` : ''}`, () => {
  // A new standby of the primary, asynchronous (the primary stops waiting for any standby's acknowledgement).
  beforeAll(() => set.addStandby('async'), 120_000);

  it('doctor warns; a long-lived crux mcp that saw a longer chain says how many records are gone, and rebuilds its view', async () => {
    const schema = schemaName('foasync');
    const url = set.storeUrl(schema);
    const doctor = await crux(url, ['--json', 'doctor']);
    const report = JSON.parse(doctor.stdout);
    expect(report.server.replication).toMatchObject({ role: 'primary', synchronous_standby_names: '', replicated: false });
    expect(report.findings.filter((f: any) => f.code === 'replication')).toMatchObject([
      { level: 'warning', message: expect.stringMatching(/not replicated: synchronous_standby_names is empty/) },
    ]);
    const s = await startMcp(url, [], { env: { CRUX_LOCK_TIMEOUT: '2s' } });
    // A dashboard beside it: its overview read the journals' newest rows, its live updates listen on the primary.
    const ui = await startUi(url);
    let uiSaid = '';
    ui.proc.stderr!.on('data', (chunk: Buffer) => {
      uiSaid += chunk.toString();
    });
    try {
      expect((await s.call('session_put', { session_id: 'kept', state: { v: 1 } })).isError).toBeFalsy();
      expect((await api(ui, '/api/overview/activity')).status).toBe(200);
      set.caughtUp();
      set.detachStandby();
      // Acknowledged by the primary alone: the standby no longer receives its WAL.
      for (const id of ['lost1', 'lost2', 'lost3']) expect((await s.call('session_put', { session_id: id, state: {} })).isError).toBeFalsy();
      expect((await s.call('session_list', {})).structuredContent.sessions).toHaveLength(4);
      expect((await api(ui, '/api/overview/activity')).status).toBe(200);
      // Handoffs are never written here: only the dashboard's own refresh after listening again tells them changed.
      const told = nextChange(ui, (d) => d.journal === 'handoffs');
      await told.ready;
      const primary = set.single(set.primary, schema);
      const seenSeq = Number(psql(`select max(seq) from "${schema}".journal_sessions`, primary).trim());
      set.killPrimary();
      set.promote();
      const heldSeq = Number(psql(`select max(seq) from "${schema}".journal_sessions`, set.single(set.primary, schema)).trim());
      expect(heldSeq).toBeLessThan(seenSeq);
      const listed = await s.call('session_list', {});
      expect(listed.isError, JSON.stringify(listed)).toBeFalsy();
      expect(listed.structuredContent.sessions.map((x: any) => x.session_id)).toEqual(['kept']);
      const said = s.stderr();
      expect(said).toMatch(
        new RegExp(
          `sessions\\.jsonl: ${seenSeq - heldSeq} record\\(s\\) this process saw are gone: the journal ends at record ${heldSeq} on 127\\.0\\.0\\.1:\\d+`,
        ),
      );
      expect(said).not.toContain(set.password);
      // The dashboard listens again on the new primary, says what is gone, and tells every page to read its view again.
      await told.changed;
      for (let i = 0; i < 40 && !uiSaid.includes('listens again'); i += 1) await sleep(50);
      expect(uiSaid).toMatch(/the dashboard's live updates stopped .*; listening again/);
      expect(uiSaid).toMatch(new RegExp(`sessions\\.jsonl: ${seenSeq - heldSeq} record\\(s\\) this process saw are gone`));
      // Said once: the view is rebuilt from the new primary, and writes go on there.
      expect((await s.call('session_get', { session_id: 'lost1' })).structuredContent.error.code).toBe(3);
      expect((await s.call('session_put', { session_id: 'next', state: { v: 2 } })).isError).toBeFalsy();
      expect(s.stderr().match(/are gone/g)).toHaveLength(1);
      expect([...storedPuts(set.single(set.primary, schema)).keys()].sort()).toEqual(['kept', 'next']);
      // Its reads are the new primary's, and what is gone was said once.
      expect((await api(ui, '/api/overview/activity')).status).toBe(200);
      expect(uiSaid.match(/are gone/g)).toHaveLength(1);
      expect((await api(ui, '/api/sessions')).doc.sessions.map((x: any) => x.session_id).sort()).toEqual(['kept', 'next']);
      expect(uiSaid).not.toContain(set.password);
    } finally {
      await s.close();
      ui.proc.kill('SIGTERM');
      await ui.proc;
    }
  });
});
