// A tools/call's and tools/list's params as the server reads them (src/cli/mcp/arguments.ts): what is not a call is
// a protocol error in one line; arguments that fail the schema are one line naming each argument (SEP-1303).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { argumentsProblem, callOf, listRefusal } from '../../../src/cli/mcp/arguments';

describe('callOf', () => {
  it('takes a name and an object of arguments (none: {}), and says in one line what else is not a call', () => {
    expect(callOf({ name: 'session_get', arguments: { session_id: 'a' } })).toEqual({ name: 'session_get', args: { session_id: 'a' } });
    expect(callOf({ name: 'journal_check' })).toEqual({ name: 'journal_check', args: {} });
    expect(callOf({ name: 'session_get', arguments: 'x' })).toEqual({
      invalid: 'the arguments of session_get must be an object of arguments by name, not a string',
    });
    expect(callOf({ name: 'session_get', arguments: [] })).toEqual({
      invalid: 'the arguments of session_get must be an object of arguments by name, not an array',
    });
    expect(callOf({ name: 'session_get', arguments: null })).toEqual({
      invalid: 'the arguments of session_get must be an object of arguments by name, not null',
    });
    expect(callOf({ arguments: {} })).toEqual({ invalid: "tools/call needs the tool's name as a string, not nothing; tools/list names them" });
    expect(callOf({ name: 7 })).toEqual({ invalid: "tools/call needs the tool's name as a string, not a number; tools/list names them" });
    expect(callOf(undefined)).toEqual({ invalid: 'tools/call takes params {name, arguments}, not nothing' });
  });
});

describe('listRefusal', () => {
  it('refuses any cursor (the list comes in one page), and nothing else', () => {
    expect(listRefusal(undefined)).toBeUndefined();
    expect(listRefusal({})).toBeUndefined();
    expect(listRefusal({ _meta: {} })).toBeUndefined();
    expect(listRefusal({ cursor: 'x' })).toBe('invalid cursor "x": this server lists every tool at once and gives no cursor');
    expect(listRefusal({ cursor: 5 })).toMatch(/^invalid cursor 5/);
  });
});

describe('argumentsProblem', () => {
  const schema = z.object({ session_id: z.string(), limit: z.number().int().min(0).optional(), tags: z.array(z.string()).optional() }).strict();
  const problem = (args: Record<string, unknown>) => {
    const parsed = schema.safeParse(args);
    expect(parsed.success).toBe(false);
    return argumentsProblem('t', parsed.error!.issues, args);
  };

  it('names each argument once, in one line: missing, mistyped, out of range, unknown, in a list', () => {
    expect(problem({})).toBe('invalid arguments for t: argument session_id is missing');
    expect(problem({ session_id: 1 })).toBe('invalid arguments for t: argument session_id: expected string, received number');
    expect(problem({ session_id: 'a', limit: -1 })).toMatch(/^invalid arguments for t: argument limit: [^\n;]+$/);
    expect(problem({ session_id: 'a', sessionId: 'a', other: 1 })).toBe('invalid arguments for t: unknown arguments sessionId, other');
    expect(problem({ session_id: 'a', tags: ['x', 2] })).toMatch(/^invalid arguments for t: argument tags\.1: /);
    expect(problem({ limit: 'x', extra: 1 })).toMatch(
      /^invalid arguments for t: argument session_id is missing; argument limit: [^\n]+; unknown argument extra$/,
    );
  });
});
