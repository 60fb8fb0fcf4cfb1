import { describe, expect, it } from 'vitest';
import { decodePackage, encodePackage, type PackageDraft } from '../../../src/domain/handoff/package';
import { encodeTaskRecord, mergeTaskRecord, parseTaskRecord } from '../../../src/domain/handoff/task-record';

const bytes = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));

const base: PackageDraft = {
  session_id: 's1',
  session_state: '{"b":1,"a":[2]}',
  facts: [],
  created_at: '2026-11-29T21:00:00.000Z',
  source_agent: 'alice',
  target_agent: null,
  message: null,
  work_ids: [],
};

describe('encodePackage: serde_json compact output of the daemon struct', () => {
  it('writes None as null, empty lists as [], omits an absent task_record', () => {
    expect(encodePackage(base)).toBe(
      '{"session_id":"s1","session_state":{"b":1,"a":[2]},"facts":[],"created_at":"2026-11-29T21:00:00.000Z","source_agent":"alice","target_agent":null,"message":null,"work_ids":[]}',
    );
  });

  it('a session without state is session_state null', () => {
    expect(encodePackage({ ...base, session_state: null })).toContain('"session_state":null,"facts":[]');
  });

  it('puts task_record after work_ids, then handoff_id, expires_at and key_id', () => {
    const text = encodePackage({
      ...base,
      target_agent: 'bob',
      message: 'take over',
      work_ids: ['execplan:9', 'w_1'],
      task_record: { requester: 'carol', sources: ['a.md'], boundaries: [], blocker_rule: '' },
      handoff_id: 'h_00',
      expires_at: '2026-11-30T21:00:00.000Z',
      key_id: '0123456789abcdef',
    });
    expect(text).toBe(
      '{"session_id":"s1","session_state":{"b":1,"a":[2]},"facts":[],"created_at":"2026-11-29T21:00:00.000Z","source_agent":"alice","target_agent":"bob","message":"take over","work_ids":["execplan:9","w_1"],"task_record":{"requester":"carol","sources":["a.md"]},"handoff_id":"h_00","expires_at":"2026-11-30T21:00:00.000Z","key_id":"0123456789abcdef"}',
    );
  });

  it('an all-empty task record serialises to {}', () => {
    expect(encodePackage({ ...base, task_record: {} })).toMatch(/"work_ids":\[\],"task_record":\{\}\}$/);
    expect(encodeTaskRecord({ requester: '', sources: [] })).toBe('{}');
  });

  it('carries the state verbatim: whitespace, big numbers, 1.0, 1e400, integer-like keys in their order (SPEC §6)', () => {
    const state = '{ "z": 12345678901234567890, "1": 1.0,\n  "big": 1e400, "s": "a\\u0041 b" }';
    expect(encodePackage({ ...base, session_state: state })).toContain(`"session_state":${state},"facts"`);
  });

  it('refuses a state that is not JSON (exit 5), and minifies facts as before', () => {
    expect(() => encodePackage({ ...base, session_state: '{"a":' })).toThrow(/the session state cannot be packaged/);
    expect(encodePackage({ ...base, facts: ['{ "fact_id" : "f_1" }'] })).toContain('"facts":[{"fact_id":"f_1"}]');
  });

  it('escapes strings as serde_json does: short escapes, \\u00xx lowercase, raw UTF-8 and /', () => {
    const text = encodePackage({ ...base, message: 'a"b\\c\n\t\u0001\u001f/é🚀\u007f' });
    expect(text).toContain(`${String.raw`"message":"a\"b\\c\n\t\u0001\u001f/é🚀`}\u007f"`);
  });

  it('facts are spliced verbatim, minified', () => {
    const text = encodePackage({ ...base, facts: ['{"fact_id":"f_1", "n": 1.50}', '{"fact_id":"f_2"}'] });
    expect(text).toContain('"facts":[{"fact_id":"f_1","n":1.50},{"fact_id":"f_2"}],');
  });
});

describe('decodePackage', () => {
  const full = encodePackage({
    ...base,
    facts: ['{"fact_id":"f_1","entity":"s1","tenant_hash":"t9","horizon_class":"long","actor":"ops","private":false}'],
    target_agent: 'bob',
    message: 'hi',
    work_ids: ['w_1'],
    task_record: { requester: 'carol' },
    handoff_id: 'h_1',
    expires_at: '2026-11-30T21:00:00.000Z',
  });

  it('round-trips every field, with the raw state and facts', () => {
    const p = decodePackage(bytes(full));
    expect(p.session_id).toBe('s1');
    expect(p.session_state).toBe('{"b":1,"a":[2]}');
    expect(p.facts.map((f) => [f.fact_id, f.entity, f.private])).toEqual([['f_1', 's1', false]]);
    expect(p.facts[0]!.raw).toBe('{"fact_id":"f_1","entity":"s1","tenant_hash":"t9","horizon_class":"long","actor":"ops","private":false}');
    expect(p.created).toBe(Date.UTC(2026, 10, 29, 21));
    expect(p.target_agent).toBe('bob');
    expect(p.message).toBe('hi');
    expect(p.work_ids).toEqual(['w_1']);
    expect(p.task_record).toEqual({ requester: 'carol' });
    expect(p.handoff_id).toBe('h_1');
    expect(p.expires).toBe(Date.UTC(2026, 10, 30, 21));
    expect(p.key_id).toBeNull();
  });

  it('reads a daemon package: nanosecond +00:00 times, no handoff_id, no expires_at', () => {
    const daemon =
      '{"session_id":"s","session_state":null,"facts":[],"created_at":"2026-11-29T21:00:00.123456789+00:00","source_agent":"a","target_agent":null,"message":null,"work_ids":[]}';
    const p = decodePackage(bytes(daemon));
    expect(p.created).toBe(Date.UTC(2026, 10, 29, 21, 0, 0, 123));
    expect(p.session_state).toBeNull();
    expect(p.expires).toBeNull();
    expect(p.handoff_id).toBeNull();
  });

  it.each([
    ['not JSON', '{"session_id":', /is not a JSON object/],
    ['an array', '[]', /is not a JSON object/],
    ['no session_id', '{"facts":[],"created_at":"2026-01-01T00:00:00Z","source_agent":"a"}', /has no session_id/],
    ['no facts', '{"session_id":"s","created_at":"2026-01-01T00:00:00Z","source_agent":"a"}', /has no facts/],
    ['no created_at', '{"session_id":"s","facts":[],"source_agent":"a"}', /has no created_at/],
    ['no source_agent', '{"session_id":"s","facts":[],"created_at":"2026-01-01T00:00:00Z"}', /has no source_agent/],
    ['a bad time', '{"session_id":"s","facts":[],"created_at":"yesterday","source_agent":"a"}', /not an RFC 3339 time/],
    ['a fact that is not an object', '{"session_id":"s","facts":[1],"created_at":"2026-01-01T00:00:00Z","source_agent":"a"}', /fact that is not an object/],
    [
      'duplicate keys',
      '{"session_id":"s","session_id":"t","facts":[],"created_at":"2026-01-01T00:00:00Z","source_agent":"a"}',
      /has the field "session_id" twice/,
    ],
    ['work_ids of numbers', '{"session_id":"s","facts":[],"created_at":"2026-01-01T00:00:00Z","source_agent":"a","work_ids":[1]}', /work_ids/],
    // source_agent and target_agent are agent names, as --agent takes them.
    [
      'an empty source_agent',
      '{"session_id":"s","facts":[],"created_at":"2026-01-01T00:00:00Z","source_agent":""}',
      /source_agent that is not an agent name \(agent name must not be empty\)/,
    ],
    [
      'a source_agent with terminal escapes',
      '{"session_id":"s","facts":[],"created_at":"2026-01-01T00:00:00Z","source_agent":"\\u001b]0;OWNED\\u0007\\u001b[2J"}',
      /source_agent that is not an agent name \(agent name must not contain control/,
    ],
    [
      'a source_agent with a bidi override',
      '{"session_id":"s","facts":[],"created_at":"2026-01-01T00:00:00Z","source_agent":"a\\u202eb"}',
      /source_agent that is not an agent name .*U\+202E/,
    ],
    [
      'a source_agent with "::"',
      '{"session_id":"s","facts":[],"created_at":"2026-01-01T00:00:00Z","source_agent":"a::b"}',
      /source_agent that is not an agent name/,
    ],
    [
      'a source_agent that is not a string',
      '{"session_id":"s","facts":[],"created_at":"2026-01-01T00:00:00Z","source_agent":7}',
      /source_agent that is not a string/,
    ],
    [
      'an empty target_agent',
      '{"session_id":"s","facts":[],"created_at":"2026-01-01T00:00:00Z","source_agent":"a","target_agent":""}',
      /target_agent that is not an agent name/,
    ],
    [
      'a target_agent with a zero-width space',
      '{"session_id":"s","facts":[],"created_at":"2026-01-01T00:00:00Z","source_agent":"a","target_agent":"b\\u200b"}',
      /target_agent that is not an agent name .*U\+200B/,
    ],
    [
      'a target_agent with U+FFFD',
      '{"session_id":"s","facts":[],"created_at":"2026-01-01T00:00:00Z","source_agent":"a","target_agent":"\\ufffd"}',
      /target_agent that is not an agent name .*U\+FFFD/,
    ],
  ])('refuses %s with exit 5', (_name, text, message) => {
    expect(() => decodePackage(bytes(text))).toThrow(message);
    try {
      decodePackage(bytes(text));
    } catch (error) {
      expect((error as { exitCode: number }).exitCode).toBe(5);
    }
  });

  it('refuses bytes that are not UTF-8', () => {
    expect(() => decodePackage(new Uint8Array([0x7b, 0xff, 0x7d]))).toThrow(/not UTF-8/);
  });
});

describe('task record', () => {
  it('validates types, refuses unknown fields, scrubs credentials', () => {
    expect(parseTaskRecord({ requester: 'r', sources: ['https://u:tok@example.com/x'] })).toEqual({
      requester: 'r',
      sources: ['https://example.com/x'],
    });
    expect(() => parseTaskRecord({ sources: 'one' })).toThrow(/list of strings/);
    expect(() => parseTaskRecord({ requester: 3 })).toThrow(/must be a string/);
    expect(() => parseTaskRecord({ owner: 'x' })).toThrow(/unknown field "owner"/);
    expect(() => parseTaskRecord([])).toThrow(/JSON object/);
  });

  it('flags lay over the file', () => {
    expect(mergeTaskRecord(undefined, {})).toBeUndefined();
    expect(mergeTaskRecord({ requester: 'a', sources: ['x'] }, { requester: 'b', boundaries: ['no prod'] })).toEqual({
      requester: 'b',
      sources: ['x'],
      boundaries: ['no prod'],
    });
  });
});

describe('what put accepts, a package carries', () => {
  it('packages and decodes repeated keys, depth 600 and 1e400 inside the state verbatim (serde refuses repeats only among the package fields)', () => {
    for (const state of ['{"a":1,"a":2}', `${'['.repeat(600)}${']'.repeat(600)}`, '{"n":1e400,"s":"\\ud800"}', '{"f":{"session_id":1,"session_id":2}}']) {
      const text = encodePackage({ ...base, session_state: state });
      expect(decodePackage(bytes(text)).session_state).toBe(state);
    }
  });

  it('decodes the state as it stands between its colon and the next comma, whitespace around it included', () => {
    for (const state of ['{ "a" : 1.0 , "a" : 2 }', '{"plan": ["a", "b"]}', '  {"pad" : 1}\n', '\n[1, 2]\t', ' null\n', '"text"', '7']) {
      const text = encodePackage({ ...base, session_state: state });
      expect(JSON.parse(text).session_state).toEqual(JSON.parse(state));
      expect(decodePackage(bytes(text)).session_state).toBe(state);
    }
  });

  it("keeps accepting minified packages (a daemon's, an older crux's) as they are, and null as no state", () => {
    const old =
      '{"session_id":"s","session_state":{"plan":["a","b"]},"facts":[],"created_at":"2026-11-29T21:00:00.000Z","source_agent":"a","target_agent":null,"message":null,"work_ids":[]}';
    expect(decodePackage(bytes(old)).session_state).toBe('{"plan":["a","b"]}');
    expect(decodePackage(bytes(old.replace('{"plan":["a","b"]}', 'null'))).session_state).toBeNull();
  });
});
