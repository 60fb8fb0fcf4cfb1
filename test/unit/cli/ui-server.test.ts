// `crux ui`'s server in-process (src/cli/ui/): its routes over a data directory written through the operations,
// each answer the operation's document; the backward journal reader across its read blocks; the live watch.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextOf } from '../../../src/cli/context';
import { listSessions, putSession } from '../../../src/cli/operations/session';
import { recordCase } from '../../../src/cli/operations/case';
import { startUi, type RunningUi as Server } from '../../../src/cli/ui/server';
import { linesBackwards } from '../../../src/cli/ui/overview';
import { fanOut, watchDataDir } from '../../../src/cli/ui/live';
import { parseLogicalSessionId } from '../../../src/shared/ids';
import { freshDataDir, tempDir, testEnv } from '../../helpers/cli';
import { api, nextChange, raw, type RunningUi } from '../../helpers/ui';

const NOW = '2026-11-30T12:00:00.000Z';
const env = testEnv({ CRUX_NOW: NOW });

describe('the server in-process', () => {
  const dataDir = freshDataDir();
  let server: Server;
  let ui: RunningUi;

  beforeAll(async () => {
    const planner = contextOf({ dataDir, agent: 'planner' }, env);
    await putSession(planner, parseLogicalSessionId('p1'), { state: '{"a":1}' });
    await putSession(planner, parseLogicalSessionId('p1'), { state: '{"a":2}' });
    await putSession(contextOf({ dataDir }, env), parseLogicalSessionId('loose'), { state: '[]' });
    await recordCase(contextOf({ dataDir }, env), {
      task: 'tidy the logs',
      context: null,
      action: 'rm',
      outcome: 'ok',
      success: true,
      reward: 1,
      tags: ['ops'],
      source_receipt: null,
    });
    server = await startUi({ dataDir }, { port: 0, bind: '127.0.0.1', open: false, assets: resolve(__dirname, '../../../dist/ui') }, env);
    const { port, token } = server.binding;
    ui = { proc: undefined as never, line: '', port, token, base: `http://127.0.0.1:${port}`, cookie: `crux_ui_${port}=${token}` };
  });

  afterAll(() => server?.close());

  it('answers /api/sessions with the operation’s document, all agents unless one is named', async () => {
    const ctx = contextOf({ dataDir }, env);
    expect((await api(ui, '/api/sessions')).doc).toEqual(
      JSON.parse(JSON.stringify(await listSessions(ctx, { all: false, archived: false, stranded: false, allAgents: true }))),
    );
    const scoped = contextOf({ dataDir, agent: 'planner' }, env);
    expect((await api(ui, '/api/sessions?agent=planner')).doc).toEqual(
      JSON.parse(JSON.stringify(await listSessions(scoped, { all: false, archived: false, stranded: false, allAgents: false }))),
    );
    expect((await api(ui, '/api/sessions?limit=1')).doc.sessions).toHaveLength(1);
  });

  it('reads the store anew on every request: a write between two requests shows in the second', async () => {
    const before = (await api(ui, '/api/sessions')).doc.sessions.length;
    await putSession(contextOf({ dataDir }, env), parseLogicalSessionId('later'), { state: '{}' });
    expect((await api(ui, '/api/sessions')).doc.sessions.length).toBe(before + 1);
  });

  it('counts activity per hour from the journals’ tails', async () => {
    const { doc } = await api(ui, '/api/overview/activity?days=1');
    expect(doc.hours).toHaveLength(24);
    const sum = (k: string) => doc.hours.reduce((n: number, h: Record<string, number>) => n + h[k]!, 0);
    expect([sum('puts'), sum('cases'), sum('closes')]).toEqual([4, 1, 0]);
  });

  it('answers errors with the CLI’s error document: 404 for an unknown path or session, 400 for bad input', async () => {
    expect(await api(ui, '/api/sessions/planner/none')).toMatchObject({ status: 404, doc: { error: { code: 3, kind: 'not_found' } } });
    expect(await api(ui, '/api/whatever')).toMatchObject({ status: 404 });
    expect(await api(ui, '/api/sessions?limit=-1')).toMatchObject({ status: 400, doc: { error: { code: 5 } } });
    expect((await raw(ui, '/api/sessions/%E0%A4%A', { cookie: ui.cookie })).status).toBe(400);
  });

  it('streams `changed` after a write', async () => {
    const events = nextChange(ui, (d) => d.journal === 'cases');
    await events.ready;
    await recordCase(contextOf({ dataDir }, env), {
      task: 'again',
      context: null,
      action: 'x',
      outcome: 'y',
      success: false,
      reward: 0,
      tags: [],
      source_receipt: null,
    });
    expect(await events.changed).toEqual({ journal: 'cases' });
  });
});

describe('the backward journal reader', () => {
  it('yields every line, last first, across its 256 KiB blocks, a line without its newline last in the file too', () => {
    const dir = tempDir();
    const path = join(dir, 'j.jsonl');
    const lines = Array.from({ length: 5000 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat((i * 7919) % 400)}"}`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    expect([...linesBackwards(path)]).toEqual([...lines].reverse());
    appendFileSync(path, '{"torn":');
    expect([...linesBackwards(path)].slice(0, 2)).toEqual(['{"torn":', lines.at(-1)]);
    expect([...linesBackwards(join(dir, 'missing'))]).toEqual([]);
  });
});

describe('the live watch', () => {
  it('tells each journal once per burst, and sees a data directory that appears after it started', async () => {
    const out = fanOut();
    const heard: string[] = [];
    // Waits for the burst's tells (however late a loaded machine runs the timer), then one more turn of the
    // event loop, in which a second tell of the same burst would have come.
    const both = new Promise<void>((resolveBoth) =>
      out.subscribe((j) => {
        heard.push(j);
        if (heard.length === 2) resolveBoth();
      }),
    );
    for (let i = 0; i < 5; i++) out.tell('sessions');
    out.tell('cases');
    await both;
    await new Promise((r) => setImmediate(r));
    expect(heard.sort()).toEqual(['cases', 'sessions']);
    out.close();

    const dir = join(tempDir(), 'data');
    const live = watchDataDir(dir, ['sessions.jsonl', 'cases.jsonl']);
    const changed = new Promise<string>((resolveChange) => live.subscribe(resolveChange));
    mkdirSync(dir);
    // The first stat may come after the first write (then that is its baseline): a writer goes on appending.
    let told = false;
    void changed.then(() => {
      told = true;
    });
    for (let i = 0; !told; i++) {
      appendFileSync(join(dir, 'cases.jsonl'), `{"n":${i}}\n`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await changed).toBe('cases');
    live.close();
  });
});
