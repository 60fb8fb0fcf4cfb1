import { describe, expect, it } from 'vitest';
import { scrubText } from '../../../src/shared/scrub';

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
    for (const text of ['https://h/path@x', 'https://h/x?y=a@b', 'mailto:a@b', '://u:p@h', 'no url here', '']) {
      expect(scrubText(text)).toBe(text);
    }
  });

  it('is linear on long runs of scheme characters (a 64 KiB field)', () => {
    for (const text of ['a.'.repeat(32 * 1024), 'a.'.repeat(32 * 1024) + ' ://', 'a'.repeat(64 * 1024) + ' https://h', '1.'.repeat(32 * 1024) + '://']) {
      const start = performance.now();
      scrubText(text);
      expect(performance.now() - start).toBeLessThan(200);
    }
  });

  it('does not overflow the stack on megabytes of "@" (a handoff message may be that long)', () => {
    expect(scrubText(`https://${'@'.repeat(6_000_000)}h/x`)).toBe('https://h/x');
    expect(scrubText(`https://${'a@'.repeat(3_000_000)}`)).toBe('https://');
  });
});
