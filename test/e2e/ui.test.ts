// `crux ui` from outside (SPEC §12): the URL line, the token, Host and method rules, the CSP, every API path
// equal to the CLI's --json document for the same store, live events after another process's write, and a
// clean exit on SIGINT and SIGTERM, over both kinds of store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { freshStore, snapshotDir, crux as spawned, STORE_KINDS, tempDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { api, nextChange, raw, startUi, URL_LINE, type RunningUi } from '../helpers/ui';
import { ATTENTION, populate, populateAttention, UI_NOW } from '../helpers/ui-store';

const recorded = (snapshot: Record<string, string>) =>
  Object.fromEntries(Object.entries(snapshot).filter(([name]) => !name.startsWith('cache/') && !/_index$|^snapshots$|^secondary_indexes$/.test(name)));

const cliJson = async (store: string, args: string[]) => {
  const r = await crux(store, ['--now', UI_NOW, '--json', ...args]);
  expect(r.exitCode).toBe(0);
  return JSON.parse(r.stdout);
};

describe.each(STORE_KINDS)('crux ui on a %s store', (kind) => {
  let store: string;
  let ui: RunningUi;
  let before: Record<string, string>;

  beforeAll(async () => {
    store = freshStore(kind);
    await populate(store);
    ui = await startUi(store, [], { CRUX_NOW: UI_NOW });
    before = snapshotDir(store);
  }, 120_000);

  afterAll(async () => {
    ui?.proc.kill('SIGTERM');
    await ui?.proc;
  });

  it('prints exactly one line, the URL with its token, bound to loopback on a free port', () => {
    expect(ui.line).toMatch(URL_LINE);
    expect(ui.line.startsWith('crux ui: http://127.0.0.1:')).toBe(true);
    expect(ui.port).toBeGreaterThan(0);
    expect(ui.token.length).toBeGreaterThanOrEqual(32);
  });

  it('answers 401 on every path without the token or its cookie, and to a wrong one', async () => {
    for (const path of ['/', '/index.html', '/assets/app.js', '/api/sessions', '/api/events', '/api/journal/check', '/nope']) {
      expect((await raw(ui, path)).status, path).toBe(401);
      expect((await raw(ui, path, { cookie: `crux_ui_${ui.port}=wrong` })).status, path).toBe(401);
    }
    expect((await raw(ui, '/?token=wrong')).status).toBe(401);
    expect((await raw(ui, `/api/sessions?token=${ui.token}x`)).status).toBe(401);
  });

  it('exchanges the token for an HttpOnly, SameSite=Strict cookie and drops it from the address', async () => {
    const r = await raw(ui, `/?token=${ui.token}`);
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe('/');
    const cookie = String(r.headers['set-cookie']);
    expect(cookie).toContain(`crux_ui_${ui.port}=${ui.token}`);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const page = await raw(ui, '/', { cookie: cookie.split(';')[0] });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    // Every script is a file crux serves: none inline, none from elsewhere.
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc="\/assets\/)/);
    expect(page.body).not.toMatch(/https?:\/\//);
    // An API path with the token answers at once (a script's first call), and sets the cookie too.
    const direct = await raw(ui, `/api/sessions?token=${ui.token}`);
    expect(direct.status).toBe(200);
    expect(String(direct.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Strict/);
  });

  it('refuses a foreign Host with 403 (DNS rebinding), even with the token; the bound address and localhost pass', async () => {
    for (const host of ['evil.example', `evil.example:${ui.port}`, `127.0.0.1:${ui.port + 1}`, `localhost.evil.example:${ui.port}`, `[::1]:${ui.port}`]) {
      expect((await raw(ui, `/?token=${ui.token}`, { host })).status, host).toBe(403);
      expect((await raw(ui, '/api/sessions', { host, cookie: ui.cookie })).status, host).toBe(403);
    }
    expect((await raw(ui, '/api/sessions', { host: `localhost:${ui.port}`, cookie: ui.cookie })).status).toBe(200);
    expect((await raw(ui, '/api/sessions', { host: `LOCALHOST:${ui.port}`, cookie: ui.cookie })).status).toBe(200);
  });

  it('answers only GET and HEAD: any other method is 405, with or without the cookie', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const r = await raw(ui, '/api/sessions', { method, cookie: ui.cookie });
      expect(r.status, method).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD');
      expect((await raw(ui, '/', { method })).status, method).toBe(405);
    }
    const head = await raw(ui, '/api/sessions', { method: 'HEAD', cookie: ui.cookie });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('sends a strict Content-Security-Policy and serves its own assets', async () => {
    for (const path of ['/', '/assets/app.js', '/assets/app.css', '/api/sessions', '/nope']) {
      const r = await raw(ui, path, { cookie: ui.cookie });
      const csp = String(r.headers['content-security-policy']);
      expect(csp, path).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(r.headers['x-content-type-options']).toBe('nosniff');
    }
    const js = await raw(ui, '/assets/app.js', { cookie: ui.cookie });
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toMatch(/^text\/javascript/);
    expect(js.body).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    expect((await raw(ui, '/assets/../package.json', { cookie: ui.cookie })).status).toBe(404);
  });

  it('/api/sessions is `session list --json --all-agents`, with the list options as query parameters', async () => {
    const cases: [string, string[]][] = [
      ['/api/sessions', ['session', 'list', '--all-agents']],
      ['/api/sessions?all=1', ['session', 'list', '--all-agents', '--all']],
      ['/api/sessions?status=closed', ['session', 'list', '--all-agents', '--status', 'closed']],
      ['/api/sessions?status=active,handed_off&limit=2', ['session', 'list', '--all-agents', '--status', 'active,handed_off', '--limit', '2']],
      ['/api/sessions?stranded=1&stale_after=1h', ['session', 'list', '--all-agents', '--stranded', '--stale-after', '1h']],
      ['/api/sessions?agent=planner', ['--agent', 'planner', 'session', 'list']],
      ['/api/sessions?agent=planner&all=1&sort=-tokens', ['--agent', 'planner', 'session', 'list', '--all', '--sort', '-tokens']],
      ['/api/sessions?all_agents=0', ['session', 'list']],
    ];
    for (const [path, args] of cases) {
      const { status, doc } = await api(ui, path);
      expect(status, path).toBe(200);
      expect(doc, path).toEqual(await cliJson(store, args));
    }
    expect((await api(ui, '/api/sessions')).doc.sessions.length).toBeGreaterThan(0);
  });

  it('every other API path is the CLI document for the same question', async () => {
    const cases: [string, string[]][] = [
      ['/api/sessions/planner/plan-1', ['--agent', 'planner', 'session', 'get', 'plan-1']],
      ['/api/sessions/planner/plan-1?at=1', ['--agent', 'planner', 'session', 'get', 'plan-1', '--at', '1']],
      ['/api/sessions/planner/plan-2', ['--agent', 'planner', 'session', 'get', 'plan-2']],
      ['/api/sessions/-/loose', ['session', 'get', 'loose']],
      ['/api/sessions/planner/plan-1/history', ['--agent', 'planner', 'session', 'history', 'plan-1']],
      ['/api/cases', ['case', 'list']],
      ['/api/cases?tag=tls&only_failure=1', ['case', 'list', '--tag', 'tls', '--only-failure']],
      ['/api/cases/retrieve?task=renew%20the%20tls%20certificate', ['case', 'retrieve', 'renew', 'the', 'tls', 'certificate']],
      ['/api/cases/retrieve?task=tls&top_k=1', ['case', 'retrieve', 'tls', '--top-k', '1']],
      ['/api/handoffs', ['handoff', 'list']],
      ['/api/handoffs?status=outstanding&to=builder', ['handoff', 'list', '--status', 'outstanding', '--to', 'builder']],
      ['/api/journal/check', ['journal', 'check']],
    ];
    for (const [path, args] of cases) {
      const { status, doc } = await api(ui, path);
      expect(status, path).toBe(200);
      const expected = await cliJson(store, args);
      if (path === '/api/journal/check') for (const j of [...doc.journals, ...expected.journals]) delete j.replay_ms;
      expect(doc, path).toEqual(expected);
    }
    // The exact bytes of a state are spliced in as stored, as `session get --json` prints them.
    const r = await raw(ui, '/api/sessions/planner/plan-1', { cookie: ui.cookie });
    const cli = await crux(store, ['--now', UI_NOW, '--json', '--agent', 'planner', 'session', 'get', 'plan-1']);
    expect(r.body).toBe(cli.stdout);
  });

  it('/api/handoffs/<id>/inspect is `handoff export <id> | handoff inspect --as <its target> --json`', async () => {
    const [minted] = (await api(ui, '/api/handoffs')).doc.handoffs;
    const file = join(tempDir(), 'pkg.json');
    expect((await crux(store, ['--now', UI_NOW, 'handoff', 'export', minted.handoff_id, '--out', file])).exitCode).toBe(0);
    const inspected = await crux(store, ['--now', UI_NOW, '--json', 'handoff', 'inspect', file, '--as', 'builder']);
    const { status, doc } = await api(ui, `/api/handoffs/${minted.handoff_id}/inspect`);
    expect(status).toBe(200);
    expect(doc).toEqual(JSON.parse(inspected.stdout));
    expect(Object.values(doc.checks)).not.toContain('failed');
    expect((await api(ui, '/api/handoffs/h_nope/inspect')).status).toBe(404);
  });

  it('refuses bad input as the CLI does, with its error document and an HTTP status', async () => {
    const missing = await api(ui, '/api/sessions/planner/nope');
    expect(missing.status).toBe(404);
    expect(missing.doc.error.code).toBe(3);
    for (const path of [
      '/api/sessions?limit=abc',
      '/api/sessions?status=bogus',
      '/api/sessions?stranded=maybe',
      '/api/cases/retrieve',
      '/api/sessions/bad%3A%3Aagent/x',
      '/api/handoffs?sort=nope',
    ]) {
      const r = await api(ui, path);
      expect(r.status, path).toBe(400);
      expect(r.doc.error.code, path).toBe(5);
    }
    expect((await api(ui, '/api/no/such/path')).status).toBe(404);
  });

  it('serves the overview: sessions by status and freshness, stranded first, activity per hour, success by tag, sizes', async () => {
    const counts = (await api(ui, '/api/overview/sessions')).doc;
    expect(counts.total).toBe(4);
    expect(counts.by_status).toEqual({ active: 2, handed_off: 1, closed: 1 });
    // Freshness describes open sessions: the closed one is not counted (SPEC §4).
    expect(Object.values(counts.by_freshness).reduce((a: number, b) => a + (b as number), 0)).toBe(3);
    expect(counts.attention.stranded.sessions.map((s: { session_id: string }) => s.session_id)).toEqual(['build-1']);
    expect(counts.attention.stranded.count).toBe(1);
    const act = (await api(ui, '/api/overview/activity')).doc;
    expect(act.hours).toHaveLength(168);
    const total = (series: string) => act.hours.reduce((n: number, h: Record<string, number>) => n + h[series]!, 0);
    expect([total('puts'), total('closes'), total('handoffs'), total('cases')]).toEqual([5, 1, 1, 3]);
    const tags = (await api(ui, '/api/overview/tags')).doc;
    expect(tags.tags).toEqual([
      { tag: 'tls', cases: 2, successes: 1, success_rate: 0.5 },
      { tag: 'web', cases: 1, successes: 1, success_rate: 1 },
    ]);
    const journals = (await api(ui, '/api/overview/journals')).doc;
    expect(journals.journals.find((j: { name: string }) => j.name === 'sessions').bytes).toBeGreaterThan(0);
    expect((await api(ui, '/api/overview/activity?days=40')).status).toBe(400);
  });

  // Derived caches (cache/) are refreshed by any read, the CLI's too: the journals, keys and history are not touched.
  it('writes nothing: every journal, key and history file is byte for byte as it was after every request', () => {
    expect(recorded(snapshotDir(store))).toEqual(recorded(before));
  });

  it('says `changed` on /api/events after a write by another process', async () => {
    const events = nextChange(ui, (d) => d.journal === 'sessions');
    await events.ready;
    const put = await crux(store, ['--agent', 'live', 'session', 'put', 'live-1', '{"n":1}']);
    expect(put.exitCode).toBe(0);
    expect(await events.changed).toEqual({ journal: 'sessions' });
    before = snapshotDir(store);
  });
});

describe.each(STORE_KINDS)('crux ui, what needs attention, at 2,000 sessions on a %s store', (kind) => {
  let store: string;
  let ui: RunningUi;

  beforeAll(async () => {
    store = freshStore(kind);
    await populateAttention(store, tempDir());
    ui = await startUi(store, [], { CRUX_NOW: UI_NOW });
  }, 180_000);

  afterAll(async () => {
    ui?.proc.kill('SIGTERM');
    await ui?.proc;
  });

  it('counts what needs attention: stranded without the archived, failures of the week, expired not reaped, expiring soon', async () => {
    const r = await raw(ui, '/api/overview/sessions', { cookie: ui.cookie });
    expect(r.headers['x-crux-now']).toBe(UI_NOW);
    const { attention, total, by_status, by_freshness } = JSON.parse(r.body);
    expect(total).toBe(ATTENTION.total);
    expect({
      failed: attention.failed_recently.count,
      expired: attention.expired_unreaped.count,
      expiring: attention.expiring_soon.count,
      stranded: attention.stranded.count,
    }).toEqual({ failed: ATTENTION.failedRecently, expired: ATTENTION.expiredUnreaped, expiring: ATTENTION.expiringSoon, stranded: ATTENTION.stranded });
    expect(attention.windows).toEqual({ recent: '7d', soon: '1h' });
    expect(attention.failed_recently.sessions.map((s: { outcome: string }) => s.outcome)).toEqual(expect.arrayContaining(['failed']));
    // Freshness counts open sessions only.
    const counted = Object.values(by_freshness as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(counted).toBe(total - by_status.closed);
    // The CLI agrees: stranded is the same rule.
    expect((await cliJson(store, ['session', 'list', '--stranded', '--all-agents'])).sessions).toHaveLength(ATTENTION.stranded);
    const act = (await api(ui, '/api/overview/activity')).doc;
    expect(act.series).toContain('failed');
    expect(act.hours.reduce((n: number, h: Record<string, number>) => n + h.failed!, 0)).toBe(ATTENTION.chartFailures);
  });

  it('/api/sessions pages the lists the overview links to, each with its total', async () => {
    const page = async (q: string) => (await api(ui, `/api/sessions?${q}`)).doc;
    const stranded = await page('stranded=1&sort=updated&offset=0&limit=50');
    expect([stranded.total, stranded.offset, stranded.sessions.length]).toEqual([ATTENTION.stranded, 0, 50]);
    expect(stranded.sessions.every((s: { status: string }) => s.status === 'active' || s.status === 'handed_off')).toBe(true);
    const newest = await page('stranded=1&offset=0&limit=50');
    expect(newest.total).toBe(ATTENTION.stranded);
    const tail = await page(`stranded=1&offset=${ATTENTION.stranded - 7}&limit=50`);
    expect(tail.sessions).toHaveLength(7);
    const failed = await page('outcome=failed,abandoned&closed_within=7d&offset=0&limit=50');
    expect(failed.total).toBe(ATTENTION.failedRecently);
    expect(new Set(failed.sessions.map((s: { outcome: string }) => s.outcome))).toEqual(new Set(['failed', 'abandoned']));
    expect((await page('outcome=failed&offset=0&limit=1')).total).toBe(ATTENTION.failedRecently - 12 + ATTENTION.failedLongAgo);
    const expired = await page('expired=1&sort=expires&offset=0&limit=50');
    expect(expired.total).toBe(ATTENTION.expiredUnreaped);
    for (const s of expired.sessions) expect(Date.parse(s.expires_at)).toBeLessThanOrEqual(Date.parse(UI_NOW));
    expect((await page('expiring_within=1h&offset=0')).total).toBe(ATTENTION.expiringSoon);
    expect((await page('all=1&offset=0&limit=50')).total).toBe(ATTENTION.total);
    expect((await page('q=parked-1&offset=0')).total).toBe(111);
    // Without the dashboard's parameters the document is still the CLI's.
    expect((await api(ui, '/api/sessions?stranded=1&limit=3')).doc).toEqual(
      await cliJson(store, ['session', 'list', '--all-agents', '--stranded', '--limit', '3']),
    );
    for (const bad of ['offset=-1', 'outcome=bogus', 'closed_within=soon', 'expired=maybe'])
      expect((await api(ui, `/api/sessions?${bad}`)).status, bad).toBe(400);
  });

  it("/api/cases/<id> is `case show <id> --json` (the case page's twin)", async () => {
    const { status, doc } = await api(ui, '/api/cases/c_attention_00000');
    expect(status).toBe(200);
    expect(doc).toEqual(await cliJson(store, ['case', 'show', 'c_attention_00000']));
    expect(doc.case.context).toContain('the vault was sealed');
    expect((await api(ui, '/api/cases/c_nope')).status).toBe(404);
    // The cases page's pages: the CLI's list, with how many match and where the page starts.
    const first = (await api(ui, '/api/cases?sort=-created&offset=0&limit=50')).doc;
    expect([first.total, first.offset, first.cases.length, first.cases[0].case_id]).toEqual([ATTENTION.cases, 0, 50, 'c_attention_00000']);
    const last = (await api(ui, `/api/cases?only_failure=1&offset=280&limit=50`)).doc;
    expect([last.total, last.cases.length]).toEqual([286, 6]);
    expect((await api(ui, '/api/cases?offset=x')).status).toBe(400);
  });
});

describe('crux ui, the process', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('exits 0 on %s, having printed only its URL line', async (signal) => {
    const ui = await startUi(freshStore('dir'));
    ui.proc.kill(signal);
    const r = await ui.proc;
    expect(r.exitCode).toBe(0);
    expect(String(r.stdout)).toBe(ui.line);
    expect(String(r.stderr)).toBe('');
  });

  it('listens on the port asked for; a port in use or out of range is refused with its code', async () => {
    const first = await startUi(freshStore('dir'));
    // Processes: a `crux ui` that served would not end in-process.
    const second = await spawned(freshStore('dir'), ['ui', '--port', String(first.port)]);
    expect(second.exitCode).toBe(75);
    expect(second.stderr).toMatch(/^crux: port \d+ on 127\.0\.0\.1 is in use/);
    first.proc.kill('SIGTERM');
    await first.proc;
    for (const port of ['70000', '-1', 'x']) {
      const r = await spawned(freshStore('dir'), ['ui', '--port', port]);
      expect(r.exitCode, port).toBe(5);
      expect(r.stdout).toBe('');
    }
  });
});
