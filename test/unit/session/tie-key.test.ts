// The tags in the session index's ordered values (tie-key.ts's `tied`, fold.ts's `scoped_order`) are stored in
// cache/ and in PostgreSQL's index rows: one hash makes both, and its values never change.
import { describe, expect, it } from 'vitest';
import { hashTag, tiedValue } from '../../../src/domain/session/tie-key';

describe('hashTag', () => {
  it('gives the tags stored indexes hold', () => {
    expect([hashTag('1764950400000', 1), hashTag('0', 1), hashTag('planner', 2), hashTag('@planner\u0000bui', 2)]).toEqual(['N', 'r', 'z4', ',B']);
    expect(tiedValue('planner::build-42', 1764950400000)).toBe('Nplanner::build-42');
  });
});
