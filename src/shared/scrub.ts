// Free text as it may be stored and shown: every URL in it without its credentials (SPEC §7), whether written
// out (`https://u:p@h`), protocol-relative (`//u:p@h`) or percent-encoded inside other text, as in a redirect
// parameter (`next=https%3A%2F%2Fu%3Ap%40h`, also encoded twice: `%252F`, `%2540`).

// `//userinfo@` → `//`; userinfo is everything up to the last "@" before the host part ends.
// - any "//" starts an authority, with a scheme or without (`//u:p@h`), even glued to a word (`id_https://`),
//   but not the third slash of `file:///a@b`, which is a path;
// - scanning stays linear: the match starts at the literal "//" (a leading lookbehind, which V8 tries at every
//   position, backtracked over runs of scheme characters: 64 KiB of `a.a.a.` took 2.5 s), and a run ends at
//   the next "/", so no character is scanned from two starts;
// - the userinfo is one character class (the greedy run backs off to its last "@"), not a repeated group,
//   which would keep a backtrack entry per "@" and overflow the stack on a few MB of them (a package message).
const USERINFO_AFTER_SLASHES = /\/\/(?<!\/\/\/)[^\s/?#]*@/g;

export function scrubText(text: string): string {
  const plain = text.includes('//') ? text.replace(USERINFO_AFTER_SLASHES, '//') : text;
  return plain.includes('%') ? scrubEncoded(plain) : plain;
}

const HEX = /^[0-9a-fA-F]{2}$/;

/** The percent escape at `i` (`%40`, or `%2540` encoded twice): the byte's two hex digits, lower case, and where it ends. */
function escapeAt(text: string, i: number): { hex: string; end: number } | undefined {
  if (text.charCodeAt(i) !== 0x25 || !HEX.test(text.slice(i + 1, i + 3))) return undefined;
  let j = i + 1;
  while (text.startsWith('25', j) && HEX.test(text.slice(j + 2, j + 4))) j += 2;
  return { hex: text.slice(j, j + 2).toLowerCase(), end: j + 2 };
}

// Where an encoded authority ends: whitespace, a raw or encoded "/", "?" or "#", and a raw "&" (the next parameter).
const ENDS_HOST = new Set(['2f', '3f', '23']);
const RAW_END = /[\s/?#&]/;

/** `%2F%2Fuserinfo%40` → `%2F%2F`, in one pass (each character is looked at a bounded number of times). */
function scrubEncoded(text: string): string {
  let out = '';
  let kept = 0;
  let from = 0;
  for (let i = text.indexOf('%', from); i >= 0; i = text.indexOf('%', from)) {
    const first = escapeAt(text, i);
    const second = first?.hex === '2f' ? escapeAt(text, first.end) : undefined;
    if (second?.hex !== '2f') {
      from = first?.end ?? i + 1;
      continue;
    }
    const start = second.end;
    let j = start;
    let cut = -1;
    while (j < text.length) {
      const c = text[j]!;
      const esc = c === '%' ? escapeAt(text, j) : undefined;
      if (esc !== undefined) {
        if (ENDS_HOST.has(esc.hex)) break;
        j = esc.end;
        if (esc.hex === '40') cut = j;
      } else if (c === '@') cut = ++j;
      else if (RAW_END.test(c)) break;
      else j++;
    }
    if (cut >= 0) {
      out += text.slice(kept, start);
      kept = cut;
    }
    from = Math.max(j, start);
  }
  return kept === 0 ? text : out + text.slice(kept);
}
