import { describe, expect, it } from 'vitest';
import { scrubText } from '../../../src/shared/scrub';
import { STRESS } from '../../helpers/cli';

/** This process's CPU time in ms (user + system): a cost, not the wait for a core that wall time adds on a busy host. */
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

describe('scrubText (SPEC §7)', () => {
  it('removes the userinfo of every URL, whatever the scheme', () => {
    expect(scrubText('https://user:token@host/x')).toBe('https://host/x');
    expect(scrubText('see (https://u:p@h/x) and git+ssh://git:tok@gh.com/a')).toBe('see (https://h/x) and git+ssh://gh.com/a');
    expect(scrubText('HTTPS://U:T@H')).toBe('HTTPS://H');
    expect(scrubText('https://u:p@ss@h/x')).toBe('https://h/x'); // up to the last @ before the host ends
    expect(scrubText('https://u:p@h\nhttps://a:b@c')).toBe('https://h\nhttps://c');
  });

  it('removes it when the scheme is glued to a word or a digit', () => {
    expect(scrubText('id_https://u:tok@h/x')).toBe('id_https://h/x');
    expect(scrubText('1https://u:tok@h/x')).toBe('1https://h/x');
    expect(scrubText('url=https://u:tok@h/x')).toBe('url=https://h/x');
  });

  it('leaves text without userinfo alone', () => {
    for (const text of [
      'https://h/path@x',
      'https://h/x?y=a@b',
      'mailto:a@b',
      'file:///home/u@x',
      'a / b@c',
      'no url here',
      '',
      '100%',
      '%zz%2F%2Fx',
      'https%3A%2F%2Fh%2Fa%40b',
      'next=https%3A%2F%2Fh&mail=a%40b',
    ]) {
      expect(scrubText(text)).toBe(text);
    }
  });

  it('removes it from protocol-relative URLs (SPEC §7)', () => {
    expect(scrubText('//u:SECRET@h/x')).toBe('//h/x');
    expect(scrubText('see //u:SECRET@h/x and (//a:b@c)')).toBe('see //h/x and (//c)');
    expect(scrubText('src="//u:SECRET@cdn.example/app.js"')).toBe('src="//cdn.example/app.js"');
    expect(scrubText('://u:p@h')).toBe('://h');
  });

  it('removes it from percent-encoded URLs inside other text, once or twice encoded (SPEC §7)', () => {
    expect(scrubText('https%3A%2F%2Fu%3ASECRET%40h')).toBe('https%3A%2F%2Fh');
    expect(scrubText('/login?next=https%3A%2F%2Fu%3ASECRET%40h%2Fx&y=1')).toBe('/login?next=https%3A%2F%2Fh%2Fx&y=1');
    expect(scrubText('https%3a%2f%2fu%3asecret%40h')).toBe('https%3a%2f%2fh');
    expect(scrubText('%2F%2Fu%3ASECRET%40h')).toBe('%2F%2Fh');
    expect(scrubText('https%253A%252F%252Fu%253ASECRET%2540h')).toBe('https%253A%252F%252Fh');
    expect(scrubText('https%3A%2F%2Fu%3Ap%40ss%40h%2F')).toBe('https%3A%2F%2Fh%2F'); // up to the last @
    expect(scrubText('https%3A%2F%2Fu:SECRET@h')).toBe('https%3A%2F%2Fh');
    expect(scrubText('a https%3A%2F%2Fu%3As%40h b https://c:d@e')).toBe('a https%3A%2F%2Fh b https://e');
    for (const text of ['//u:SECRET@h/x', 'https%3A%2F%2Fu%3ASECRET%40h', 'x=https%253A%252F%252Fu%253ASECRET%2540h']) {
      expect(scrubText(text)).not.toContain('SECRET');
    }
  });

  it('is linear on long runs of scheme characters: 8× the field costs far less than 64× (a quadratic scan)', () => {
    // A ratio of the best of five runs at two sizes, not a wall-clock bound: it holds on a loaded machine too.
    const patterns: ((k: number) => string)[] = [
      (k) => 'a.'.repeat(k),
      (k) => `${'a.'.repeat(k)} ://`,
      (k) => `${'a'.repeat(2 * k)} https://h`,
      (k) => `${'1.'.repeat(k)}://`,
      (k) => '%2F'.repeat(2 * k),
      (k) => `%2F%2F${'%25'.repeat(2 * k)}`,
      (k) => `%2F%2F${'a'.repeat(2 * k)}`,
      (k) => `%${'25'.repeat(2 * k)}`,
      (k) => '%2F%2Fa%40'.repeat(k / 2),
      (k) => '/'.repeat(2 * k),
    ];
    const best = (text: string) =>
      Math.min(
        ...Array.from({ length: 5 }, () => {
          const start = cpuMs();
          scrubText(text);
          return cpuMs() - start;
        }),
      );
    for (const make of patterns) {
      const small = best(make(4 * 1024));
      const large = best(make(32 * 1024));
      const ratio = large / Math.max(small, 0.05);
      if (STRESS) expect(large, make(4).slice(0, 20)).toBeLessThan(200);
      expect(ratio, `${make(4).slice(0, 20)}: ${small.toFixed(2)} ms → ${large.toFixed(2)} ms`).toBeLessThan(32);
    }
  });

  it('does not overflow the stack on megabytes of "@" (a handoff message may be that long)', () => {
    expect(scrubText(`https://${'@'.repeat(6_000_000)}h/x`)).toBe('https://h/x');
    expect(scrubText(`https://${'a@'.repeat(3_000_000)}`)).toBe('https://');
    expect(scrubText(`%2F%2F${'%40'.repeat(2_000_000)}h`)).toBe('%2F%2Fh');
    expect(scrubText(`%2F%2F${'%2540'.repeat(1_000_000)}h`)).toBe('%2F%2Fh');
  });
});
