// Ids and names are parsed once at the edge: what looks the same must be the same id (exit 5 otherwise).
import { describe, expect, it } from 'vitest';
import { parseActorName, parseAgentName, parseCaseId, parseLogicalSessionId } from '../../../src/shared/ids';

const PARSERS = { parseLogicalSessionId, parseAgentName, parseActorName, parseCaseId };

function refusal(parse: (raw: string) => string, raw: string): { exitCode: number; message: string } | undefined {
  try {
    parse(raw);
    return undefined;
  } catch (error) {
    return error as { exitCode: number; message: string };
  }
}

describe('ids and names', () => {
  it.each([
    ['a bidi override', 'admin\u202egnp.exe', 'U+202E'],
    ['a zero-width space', 'zero\u200bwidth', 'U+200B'],
    ['a byte-order mark', '\ufeffid', 'U+FEFF'],
    ['a soft hyphen', 'soft\u00adhyphen', 'U+00AD'],
    ['a left-to-right mark', 'a\u200eb', 'U+200E'],
    ['a bidi isolate', 'a\u2066b\u2069', 'U+2066'],
    ['an Arabic letter mark', 'a\u061cb', 'U+061C'],
    ['a tag character (outside the BMP)', 'a\u{E0041}b', 'U+E0041'],
    ['the line separator', 'a\u2028b', 'U+2028'],
    ['U+FFFD, as invalid UTF-8 on argv decodes', '\ufffd\ufffd', 'U+FFFD'],
  ])('refuses %s with exit 5, naming the character and escaping it in the message', (_what, raw, code) => {
    for (const [name, parse] of Object.entries(PARSERS)) {
      const error = refusal(parse, raw);
      expect(error?.exitCode, `${name} ${JSON.stringify(raw)}`).toBe(5);
      expect(error!.message).toContain(code);
      expect(error!.message).not.toMatch(/[\p{Cf}\u2028\ufffd]/u);
    }
  });

  it('still takes every visible name, in any script, with emoji and combining marks', () => {
    for (const raw of ['build-42', 'किताब', 'agent.one@host', 'e\u0301té', '🦊', 'a:b', 'Ω/≈']) {
      for (const [name, parse] of Object.entries(PARSERS)) expect(parse(raw), `${name} ${raw}`).toBe(raw);
    }
  });

  it('keeps the older rules: empty, "::", control characters, lone surrogates, too long, ":" at an end', () => {
    for (const raw of ['', 'a::b', 'a\u0007b', 'a\u009bb', 'a\ud800b', 'x'.repeat(257)]) {
      expect(refusal(parseLogicalSessionId, raw)?.exitCode, JSON.stringify(raw)).toBe(5);
    }
    for (const raw of [':x', 'x:']) {
      expect(refusal(parseAgentName, raw)?.exitCode).toBe(5);
      expect(parseActorName(raw)).toBe(raw);
    }
  });
});
