// The session events as a closed union: parsed once at the boundary, folded through the machine, never in place.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSessionEvent, SESSION_EVENTS, SESSION_VOCABULARY } from '../../../src/domain/session/events';
import { nextRecord, SESSION_STORE } from '../../../src/domain/session/fold';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { encodeRecords, EMPTY_HEAD, type JournalRecord } from '../../../src/journal/codec/record';
import type { ScopedSessionId } from '../../../src/shared/ids';
import { tempDir } from '../../helpers/cli';
import { ev, given, put } from './given';

const record = (ev: string, data: unknown): JournalRecord => ({ seq: 1, ts: '2026-01-01T00:00:00.000Z', ev, data, p: '', h: '' });

describe('session events', () => {
  it('derive the vocabulary from the union: exactly the names the writers use', () => {
    expect([...SESSION_VOCABULARY].sort()).toEqual(Object.values(SESSION_EVENTS).sort());
  });

  it('parse a payload once into its type, or say why it is not one', () => {
    expect(parseSessionEvent(record('session.put', { id: 's', state: '{}', total_tokens: 'x', expires_at: null }))).toEqual({
      ev: 'session.put',
      data: { id: 's', state: '{}', total_tokens: 0, expires_at: null },
    });
    expect(parseSessionEvent(record('session.put', { id: 's' }))).toBe('no state text');
    expect(parseSessionEvent(record('session.closed', { state: 1 }))).toBe('no session id');
    expect(parseSessionEvent(record('session.closed', [1]))).toBe('the payload is not an object');
    expect(parseSessionEvent(record('session.exploded', { id: 's' }))).toBe('unknown event "session.exploded"');
    expect(parseSessionEvent(record('toString', { id: 's' }))).toBe('unknown event "toString"');
    expect(SESSION_VOCABULARY.payloadProblem!(record('session.imported', { id: 's', state: 2 }))).toBe('no state text');
  });

  it('fold through the machine: a move it refuses changes nothing (put on archived, a second close, touch after close)', () => {
    const s = given(
      put('s', '{"v":1}'),
      ev('archived', { id: 's', reason: null }),
      put('s', '{"v":2}'),
      ev('closed', { id: 's', outcome: 'failed', summary: 'first' }),
      ev('closed', { id: 's', outcome: 'completed', summary: 'second' }),
      ev('touched', { id: 's' }),
      ev('archived', { id: 'ghost', reason: null }),
    );
    expect(s.get('s' as ScopedSessionId)).toMatchObject({ state: '{"v":1}', status: 'closed', outcome: 'failed', summary: 'first' });
    expect(s.has('ghost' as ScopedSessionId)).toBe(false);
  });

  it('make a new record for each event, leaving the one before untouched', () => {
    const s = given(put('s', '{"v":1}'));
    const before = s.get('s' as ScopedSessionId)!;
    const frozen = JSON.stringify(before);
    const after = nextRecord(
      before.key,
      before,
      { ev: 'session.archived', data: { id: 's', reason: 'r' } },
      { ts: '2026-01-02T00:00:00.000Z', actor: 'a', bytes: 1 },
    );
    expect(after).toMatchObject({ status: 'archived', archive_reason: 'r', actor: 'a' });
    expect(after).not.toBe(before);
    expect(JSON.stringify(before)).toBe(frozen);
    expect(nextRecord(before.key, before, { ev: 'session.deleted', data: { id: 's' } }, { ts: '', actor: null, bytes: 0 })).toBeUndefined();
  });

  it('a payload that does not parse is reported like a bad line: skipped, counted, the rest loads', async () => {
    const root = join(tempDir(), 'data');
    fs.mkdirSync(root, { recursive: true });
    const { text } = encodeRecords(
      EMPTY_HEAD,
      [put('a', '{}'), { ev: 'session.put', data: { id: 'b', total_tokens: 3 } }, put('c', '[]')],
      '2026-01-01T00:00:00.000Z',
    );
    fs.writeFileSync(join(root, SESSION_STORE.file), text);
    const warnings: string[] = [];
    const dir = new DataDir(root, { warn: (m) => warnings.push(m) }, 5_000);
    expect([...(await dir.read(SESSION_STORE)).keys()].sort()).toEqual(['a', 'c']);
    expect(warnings).toEqual([expect.stringMatching(/sessions\.jsonl:2: bad payload for session\.put: no state text/)]);
    const [report] = await dir.check([SESSION_STORE], { repair: false, ts: '2026-01-01T00:00:00.000Z' });
    expect(report!.problems).toEqual([{ line: 2, reason: 'bad payload for session.put: no state text' }]);
  });
});
