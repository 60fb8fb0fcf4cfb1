// Retrieval terms exactly as SPEC §5 defines them: lowercased runs of alphanumeric characters, ≥ 2 code points.
//
// "Alphanumeric" is Rust's char::is_alphanumeric, the daemon's word splitter: the Unicode property Alphabetic
// (letters, letter numbers, and the combining vowel signs of Indic and other scripts, so "किताब" is one word)
// or Numeric (\p{N}). Decisions the definition leaves open, fixed here:
// - "lowercased" is String.prototype.toLowerCase: Unicode default full case mapping, locale-independent
//   (the same as Rust's str::to_lowercase and Python's str.lower). So "İ" becomes "i" + U+0307 COMBINING
//   DOT ABOVE; that mark is not Alphabetic and therefore splits the run ("İstanbul" → "stanbul").
// - No Unicode normalization: a decomposed "e" + U+0301 splits a word where the composed "é" does not.
// - "characters" are code points, not UTF-16 units: an astral letter such as "𝐀" counts as one.
// - Everything that is neither Alphabetic nor \p{N} separates: spaces, punctuation, "_", "-", most
//   combining accents, emoji.
// Changing this definition changes every stored term: bump the case-bank codec version (journal/derived/bank/codec.ts).

// Made on first use: building the Alphabetic class costs ~0.3 ms, which commands that never tokenize (every
// session command) should not pay at start-up.
let run: RegExp | undefined;
const RUN = () => (run ??= /[\p{Alphabetic}\p{N}]+/gu);
// In ASCII the Alphabetic characters of lowercased text are a–z and the Numeric ones 0–9: the same runs, found by
// a loop (addAsciiTokens) that costs nothing to set up (most queries and tasks are ASCII; a retrieve tokenizes one query).

/** The token set of one text. */
export function tokenize(text: string): Set<string> {
  const tokens = new Set<string>();
  addTokens(tokens, text);
  return tokens;
}

/** Adds the tokens of `text` to `into` (case terms are the union over task and tags). */
export function addTokens(into: Set<string>, text: string): void {
  const lower = text.toLowerCase();
  if (addAsciiTokens(into, lower)) return;
  const runs = lower.match(RUN());
  if (runs === null) return;
  for (const run of runs) if (countCodePointsAtLeast2(run)) into.add(run);
}

/**
 * The runs of a–z and 0–9 of lowercased ASCII text, by one loop over its units (a case build tokenizes every case:
 * the expression's array of matches cost ~0.4 s at 1M); false, adding nothing, for text that is not ASCII.
 */
function addAsciiTokens(into: Set<string>, lower: string): boolean {
  for (let i = 0; i < lower.length; i++) if (lower.charCodeAt(i) > 0x7f) return false;
  let start = -1;
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 0;
    const word = (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
    if (word && start < 0) start = i;
    else if (!word && start >= 0) {
      if (i - start >= 2) into.add(lower.slice(start, i));
      start = -1;
    }
  }
  return true;
}

/** A case's retrieval terms: tokens(task) ∪ tokens(each tag). */
export function caseTerms(task: string, tags: readonly string[]): Set<string> {
  const terms = tokenize(task);
  for (const tag of tags) addTokens(terms, tag);
  return terms;
}

// A run of two UTF-16 units may be a single astral code point (one surrogate pair).
function countCodePointsAtLeast2(run: string): boolean {
  if (run.length >= 3) return true;
  if (run.length < 2) return false;
  const first = run.charCodeAt(0);
  return !(first >= 0xd800 && first <= 0xdbff);
}
