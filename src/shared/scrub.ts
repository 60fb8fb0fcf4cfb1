// Free text as it may be stored and shown: every URL in it without its credentials (SPEC §7).

// `scheme://userinfo@` → `scheme://`; userinfo is everything up to the last "@" before the host part ends.
// The match starts at "://" and looks behind for the scheme (a letter, then scheme characters), so:
// - a scheme glued to a word is still a URL: `id_https://u:p@h` and `1https://u:p@h` lose `u:p@`;
// - scanning stays linear: a pattern that starts at every scheme character (or a leading lookbehind, which
//   V8 tries at every position) backtracks over each run of them — 64 KiB of `a.a.a.` took 2.5 s;
// - the userinfo is one character class (the greedy run backs off to its last "@"), not a repeated group,
//   which would keep a backtrack entry per "@" and overflow the stack on a few MB of them (a package message).
const USERINFO_AFTER_SCHEME = /:\/\/(?<=[a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^\s/?#]*@/g;

export function scrubText(text: string): string {
  return text.includes('://') ? text.replace(USERINFO_AFTER_SCHEME, '://') : text;
}

export function scrubOptional(text: string | undefined | null): string | undefined {
  return text == null ? undefined : scrubText(text);
}
