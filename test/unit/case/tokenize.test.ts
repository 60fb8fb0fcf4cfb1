import { describe, expect, it } from 'vitest';
import { caseTerms, tokenize } from '../../../src/domain/case/tokenize';

const tokens = (text: string) => [...tokenize(text)].sort();

describe('tokenize', () => {
  it('lowercases and splits on everything that is not a letter or digit', () => {
    expect(tokens('Deploy the Web-App, NOW!')).toEqual(['app', 'deploy', 'now', 'the', 'web']);
    expect(tokens('snake_case.dots/slash\tand\nlines')).toEqual(['and', 'case', 'dots', 'lines', 'slash', 'snake']);
  });

  it('drops runs shorter than two characters and keeps digits', () => {
    expect(tokens('a b cd 7 42 x2 v1.2')).toEqual(['42', 'cd', 'v1', 'x2']);
  });

  it('is a set: repeats count once', () => {
    expect(tokens('the The THE tHe')).toEqual(['the']);
  });

  it('has no tokens for empty, punctuation-only or single-letter text', () => {
    expect(tokens('')).toEqual([]);
    expect(tokens('!!! --- ... a I 9')).toEqual([]);
  });

  it('keeps accented letters, and splits at a combining mark (no normalization)', () => {
    expect(tokens('Café RÉSUMÉ naïve')).toEqual(['café', 'naïve', 'résumé']);
    // "e" + U+0301 COMBINING ACUTE: the mark is \p{M}, so it ends the run.
    expect(tokens('Cafe\u0301 re\u0301sume\u0301')).toEqual(['cafe', 're', 'sume']);
  });

  it('treats a CJK run without spaces as one token and drops single ideographs', () => {
    expect(tokens('東京タワー 北京 日 本')).toEqual(['北京', '東京タワー'].sort());
  });

  it('separates at emoji', () => {
    expect(tokens('🚀deploy🚀 now🔥ok')).toEqual(['deploy', 'now', 'ok']);
  });

  it('counts code points, not UTF-16 units: one astral letter is one character', () => {
    // U+10400 DESERET CAPITAL LONG I lowercases to U+10428: one code point, two UTF-16 units.
    expect(tokens('𐐀')).toEqual([]);
    expect(tokens('𐐀𐐀')).toEqual(['𐐨𐐨']);
    expect(tokens('𝐀𝐁 𝐀')).toEqual(['𝐀𝐁']);
  });

  it('follows Unicode default lowercasing, including the Turkish dotted capital I', () => {
    // "İ" lowercases to "i" + U+0307 COMBINING DOT ABOVE, which is not a letter: it splits the run.
    expect(tokens('İstanbul')).toEqual(['stanbul']);
    expect(tokens('İİ')).toEqual([]);
    expect(tokens('ISTANBUL ıi')).toEqual(['istanbul', 'ıi']);
    expect(tokens('ΟΔΟΣ Straße ǅungla')).toEqual(['ǆungla', 'οδος', 'straße'].sort());
    expect([...tokenize('ΟΔΟΣ')][0]).toBe('οδο\u03c2'); // final sigma
  });

  it('counts every \\p{N} as a digit: superscripts, fractions, other scripts, roman numerals', () => {
    expect(tokens('x² ½ ٣٤ ⅫⅠ Ⅻ')).toEqual(['x²', '٣٤', 'ⅻⅰ'].sort());
  });
});

describe('caseTerms', () => {
  it('is tokens(task) ∪ tokens(each tag)', () => {
    expect([...caseTerms('Deploy the web app', ['web', 'Production', 'blue-green', 'x'])].sort()).toEqual(
      ['app', 'blue', 'deploy', 'green', 'production', 'the', 'web'],
    );
  });
});
