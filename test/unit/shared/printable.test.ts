// Stored text shown to a person: every control character a terminal acts on is written as an escape.
import { describe, expect, it } from 'vitest';
import { printable, printableBlock, printableMessage } from '../../../src/shared/printable';

describe('printable', () => {
  it('escapes C0, DEL and C1 as \\xHH, newline, tab and CR by name', () => {
    expect(printable('a\u001b[31mb')).toBe('a\\x1b[31mb');
    expect(printable('\u0000\u0007\u007f\u0085\u009b')).toBe('\\x00\\x07\\x7f\\x85\\x9b');
    expect(printable('a\nb\tc\rd')).toBe('a\\nb\\tc\\rd');
  });

  it('escapes bidi controls and line separators as \\uXXXX', () => {
    expect(printable('admin\u202egnp.exe')).toBe('admin\\u202egnp.exe');
    for (const c of ['\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u2066', '\u2067', '\u2068', '\u2069', '\u2028', '\u2029']) {
      expect(printable(c)).toBe(`\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    }
  });

  it('leaves ordinary text alone: accents, CJK, emoji, right-to-left letters', () => {
    for (const text of ['héllo', '日本語', '🎉 done', 'שלום', 'a\\x1b stays literal']) expect(printable(text)).toBe(text);
  });

  it('escapes the hostile sequences of the issue: OSC title, OSC 8 hyperlink, clear screen', () => {
    const hostile = '\u001b]0;OWNED\u0007\u001b[2J \u001b]8;;http://evil\u001b\\link\u001b]8;;\u001b\\';
    expect(printable(hostile)).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(printable(hostile)).toBe('\\x1b]0;OWNED\\x07\\x1b[2J \\x1b]8;;http://evil\\x1b\\link\\x1b]8;;\\x1b\\');
  });

  it('printableBlock keeps newlines and tabs (multi-line fields) and escapes the rest', () => {
    expect(printableBlock('line 1\n\tline 2\u001b[2J\r')).toBe('line 1\n\tline 2\\x1b[2J\\r');
  });
});

describe('printableMessage', () => {
  it('escapes format characters too, astral ones as \\u{…}', () => {
    expect(printableMessage('zero\u200bwidth \u00ad \u{e0001}\u001b')).toBe('zero\\u200bwidth \\xad \\u{e0001}\\x1b');
  });
});
