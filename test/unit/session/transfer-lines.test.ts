import { describe, expect, it } from 'vitest';
import { parseImportLines, spliceState } from '../../../src/domain/session/transfer-lines';
import { judgeFreshness } from '../../../src/domain/session/freshness';
import { listSessions } from '../../../src/domain/session/query';
import { ev, given, put, T0 } from './given';
import { refusalOf } from '../../helpers/refusal';

const opts = { agent: undefined, maxStateBytes: 1 << 20, now: T0 };
const parse = (text: string, o = opts) => parseImportLines(Buffer.from(text), o);
const codeOf = refusalOf;

describe('export lines', () => {
  it('keeps a one-line state raw and adds state_text only when needed', () => {
    expect(spliceState('{"session_id":"a"}', '{"b":1.0}')).toBe('{"session_id":"a","state":{"b":1.0}}');
    const pretty = '{\r\n  "b": 1e400\n}\n';
    const line = spliceState('{"session_id":"a"}', pretty);
    expect(line).not.toMatch(/[\r\n]/);
    expect(JSON.parse(line).state_text).toBe(pretty);
    expect(parse(line)[0]!.data.state).toBe(pretty);
  });
});

describe('import lines', () => {
  it('needs only session_id and state; fills the rest', () => {
    const [e] = parse('{"session_id":"a","state":{"x": 12345678901234567890}}\n');
    expect(e).toEqual({
      line: 1,
      data: expect.objectContaining({
        id: 'a',
        state: '{"x": 12345678901234567890}',
        status: 'active',
        total_tokens: 0,
        updated_at: '2026-01-01T00:00:00.000Z',
      }),
    });
  });

  it("honours agent in the line, else the caller's; null is unscoped", () => {
    const text = '{"session_id":"a","state":1,"agent":"bob"}\n{"session_id":"b","state":2}\n{"session_id":"c","state":3,"agent":null}\n';
    expect(parse(text, { ...opts, agent: 'eve' as never }).map((e) => e.data.id)).toEqual(['__agent_session::bob::a', '__agent_session::eve::b', 'c']);
  });

  it('refuses a bad line by its number (5), skipping blank lines in the count', () => {
    const ok = '{"session_id":"a","state":{}}';
    expect(codeOf(() => parse(`${ok}\n\n{"session_id":"b"}\n`))).toBe('5 line 3: state is required');
    expect(codeOf(() => parse(`${ok}\n{"state":{}}`))).toBe('5 line 2: session_id is required (a string)');
    expect(codeOf(() => parse(`${ok}\n{nope`))).toMatch(/^5 line 2: not valid JSON/);
    expect(codeOf(() => parse(`${ok}\n${ok}`))).toBe('5 line 2: the session "a" already appears on line 1');
    expect(codeOf(() => parse('{"session_id":"a::b","state":1}'))).toMatch(/^5 line 1: session id must not contain "::"/);
    expect(codeOf(() => parse('{"session_id":"a","state":1,"status":"zombie"}'))).toMatch(/^5 line 1: status must be one of/);
    expect(codeOf(() => parse('{"session_id":"a","state":1,"expires_at":"tomorrow"}'))).toMatch(/^5 line 1: expires_at is not an RFC 3339 time/);
    expect(codeOf(() => parse('{"session_id":"a","state":1,"total_tokens":-1}'))).toMatch(/^5 line 1: total_tokens/);
    expect(codeOf(() => parse('{"session_id":"a","state":"xxxxxx"}', { ...opts, maxStateBytes: 4 }))).toMatch(
      /^5 line 1: the state is 8 bytes, over the limit of 4/,
    );
    expect(codeOf(() => parseImportLines(Buffer.from([0x7b, 0xff, 0x0a]), opts))).toBe('5 line 1: not valid UTF-8');
  });

  it('reports the bytes read after each session, up to the whole input (progress)', () => {
    const text = '{"session_id":"a","state":1}\n\n{"session_id":"b","state":2}\n';
    const heard: [number, number][] = [];
    parseImportLines(Buffer.from(text), { ...opts, onLine: (done, total) => heard.push([done, total]) });
    expect(heard).toEqual([
      [29, text.length],
      [text.length, text.length],
    ]);
  });

  it('normalises times and keeps status-consistent fields only', () => {
    const [e] = parse('{"session_id":"a","state":1,"status":"closed","updated_at":"2026-01-01T01:00:00+01:00","archive_reason":"x"}');
    expect(e!.data).toMatchObject({
      status: 'closed',
      updated_at: '2026-01-01T00:00:00.000Z',
      closed_at: '2026-01-01T00:00:00.000Z',
      outcome: 'completed',
      archive_reason: null,
    });
  });
});

describe('freshness and listing', () => {
  const t = { freshMs: 60_000, staleMs: 3_600_000, skewMs: 1000 };
  it('judges fresh, aging, stale, unknown, invalid', () => {
    expect(judgeFreshness('2026-01-01T00:00:00.000Z', T0 + 60_000, t)).toBe('fresh');
    expect(judgeFreshness('2026-01-01T00:00:00.000Z', T0 + 60_001, t)).toBe('aging');
    expect(judgeFreshness('2026-01-01T00:00:00.000Z', T0 + 3_600_001, t)).toBe('stale');
    expect(judgeFreshness(null, T0, t)).toBe('unknown');
    expect(judgeFreshness('2026-01-01T00:00:02.000Z', T0, t)).toBe('invalid');
  });

  it('lists by scope and status; stranded = stale, neither closed nor archived', () => {
    const s = given(
      { ...put('new'), ts: '2026-01-01T00:59:00.000Z' },
      { ...put('old'), ts: '2025-12-01T00:00:00.000Z' },
      { ...put('gone'), ts: '2025-12-01T00:00:00.000Z' },
      ev('closed', { id: 'gone', outcome: 'completed', summary: null }),
      { ...put('arch'), ts: '2025-12-01T00:00:00.000Z' },
      ev('archived', { id: 'arch', reason: null }),
      put('__agent_session::bob::x'),
    );
    const now = Date.parse('2026-01-01T01:00:00.000Z');
    const base = { agent: undefined, allAgents: false, all: false, archived: false, stranded: false };
    const ids = (f: Partial<typeof base>) => listSessions(s, { ...base, ...f }, now, t).sessions.map((v) => v.session_id);
    expect(ids({})).toEqual(['new', 'old']);
    expect(listSessions(s, base, now, t).hidden_scoped).toBe(1);
    expect(ids({ all: true })).toEqual(['new', 'arch', 'gone', 'old']);
    expect(ids({ archived: true })).toEqual(['arch']);
    expect(ids({ stranded: true })).toEqual(['old']);
    expect(ids({ allAgents: true })).toEqual(['new', 'x', 'old']);
    expect(ids({ agent: 'bob' as never })).toEqual(['x']);
    expect(listSessions(s, { ...base, agent: 'bob' as never }, now, t).hidden_scoped).toBe(0);
  });
});
