// `crux doctor` on a PostgreSQL store it cannot use: its report is what it could still check — the URL as read,
// each host resolved or not, each port refused or taken, the login and which user — never the password; then the
// error's exit (75 unreachable, 5 refused). And after `journal check --repair`, "quarantined" counts what the
// quarantine holds, on both kinds of store.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, describeEachStore, freshStore, journalLines, testEnv } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { pgPassword, pgServerUrl, pgSkipReason, psql } from '../helpers/pg';

/** A local port nothing listens on (taken, then let go). */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

const checksOf = (doc: { checks: { check: string; status: string; detail: string }[] }) => Object.fromEntries(doc.checks.map((c) => [c.check, c.status]));

describe('crux doctor against a PostgreSQL store it cannot use', () => {
  it('a refused port: the URL parsed, the host resolved, the port refused, the login not tried; then exit 75', async () => {
    const port = await freePort();
    const url = `postgres://ops:hunter2-secret@127.0.0.1:${port}/memory?schema=team`;
    const human = await crux(url, ['doctor']);
    expect(human.exitCode).toBe(75);
    expect(human.stdout).toMatch(new RegExp(`^store +postgres://ops@127\\.0\\.0\\.1:${port}/memory +\\(from --store\\)$`, 'm'));
    expect(human.stdout).toMatch(new RegExp(`^url +ok +server 127\\.0\\.0\\.1:${port}, database memory, user ops, schema team, no TLS$`, 'm'));
    expect(human.stdout).toMatch(/^host +ok +127\.0\.0\.1 is an address$/m);
    expect(human.stdout).toMatch(new RegExp(`^port +failed +127\\.0\\.0\\.1:${port} refused: no server listens there$`, 'm'));
    expect(human.stdout).toMatch(/^login +skipped +no server took the connection$/m);
    expect(human.stdout).toMatch(/^unreachable: port: /m);
    expect(human.stderr.trim().split('\n')).toHaveLength(1);
    expect(human.stderr).toMatch(/^crux: cannot use the PostgreSQL store .*connection refused/);
    expect(human.stdout + human.stderr).not.toContain('hunter2-secret');

    const json = await crux(url, ['doctor', '--json']);
    expect(json.exitCode).toBe(75);
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({
      healthy: false,
      reachable: false,
      store: { url: `postgres://ops@127.0.0.1:${port}/memory`, why: 'from --store', user: 'ops', database: 'memory', schema: 'team' },
    });
    expect(checksOf(doc)).toEqual({ url: 'ok', host: 'ok', port: 'failed', login: 'skipped' });
    expect(JSON.parse(json.stderr).error.code).toBe(75);
    expect(json.stdout + json.stderr).not.toContain('hunter2-secret');
  });

  it('a host that does not resolve (CRUX_STORE): the host failed, the rest skipped; exit 75', async () => {
    const run = await execa(CRUX, ['doctor', '--json'], {
      reject: false,
      env: testEnv({ CRUX_STORE: 'postgres://ops:pw-x@no-such-host.invalid:5432/memory' }),
      extendEnv: false,
    });
    expect(run.exitCode).toBe(75);
    const doc = JSON.parse(String(run.stdout));
    expect(doc.store.why).toBe('from CRUX_STORE');
    expect(checksOf(doc)).toEqual({ url: 'ok', host: 'failed', port: 'skipped', login: 'skipped' });
    expect(doc.checks[1].detail).toBe('no-such-host.invalid: no such host');
    expect(String(run.stdout) + String(run.stderr)).not.toContain('pw-x');
  });

  const noPg = pgSkipReason();
  it.skipIf(noPg !== undefined)(
    `a wrong password: the port takes connections, authentication failed for the user; exit 5${noPg ? ` (skipped: ${noPg})` : ''}`,
    async () => {
      const url = new URL(pgServerUrl());
      url.password = 'not-the-password';
      const run = await crux(url.href, ['doctor']);
      expect(run.exitCode).toBe(5);
      expect(run.stdout).toMatch(/^port +ok +127\.0\.0\.1:\d+ takes connections$/m);
      expect(run.stdout).toMatch(new RegExp(`^login +failed +authentication failed for user ${url.username}$`, 'm'));
      expect(run.stdout).toMatch(/^refused: login: /m);
      expect(run.stdout + run.stderr).not.toContain('not-the-password');
      expect(run.stdout + run.stderr).not.toContain(pgPassword());
    },
  );
});

describeEachStore('after journal check --repair on a %s store, "quarantined" counts what the quarantine holds', (kind) => {
  it('in the repair report itself, and in doctor', async () => {
    const store = freshStore(kind);
    for (const id of ['a', 'b', 'c']) expect((await crux(store, ['session', 'put', id, '{}'])).exitCode).toBe(0);
    if (kind === 'dir') {
      const path = join(store, 'sessions.jsonl');
      const lines = fs.readFileSync(path, 'utf8').split('\n');
      lines[1] = lines[1]!.replace('"b"', '"B"');
      fs.writeFileSync(path, lines.join('\n'));
    } else {
      const schema = new URL(store).searchParams.get('schema');
      psql(`update ${schema}.journal_sessions set body = replace(body, '"b"', '"B"') where line = 2`);
    }
    expect(journalLines(store, 'sessions.jsonl').some((l) => l.includes('"B"'))).toBe(true);
    const repaired = await crux(store, ['journal', 'check', '--repair', '--json']);
    expect(repaired.exitCode).toBe(0);
    const sessions = JSON.parse(repaired.stdout).journals.find((j: { file: string }) => j.file === 'sessions.jsonl');
    const held =
      kind === 'dir'
        ? fs.readdirSync(join(store, 'quarantine')).filter((n) => n.startsWith('sessions.jsonl.')).length
        : Number(psql(`select count(*) from ${new URL(store).searchParams.get('schema')}.quarantine where journal = 'sessions.jsonl'`).trim());
    expect(sessions.repaired.quarantine).toHaveLength(2);
    expect(held).toBe(2);
    expect(sessions.quarantined).toBe(held);
    const human = await crux(store, ['journal', 'check', '--repair']);
    expect(human.stdout).toMatch(/^sessions\.jsonl\t2\t\d+\tok\t2\t/m);
    const doctor = JSON.parse((await crux(store, ['doctor', '--json'])).stdout);
    expect(doctor.journals.find((j: { file: string }) => j.file === 'sessions.jsonl').quarantined).toBe(held);
  });
});
