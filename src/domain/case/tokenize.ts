// Retrieval terms exactly as SPEC §5 defines them: lowercased runs of Unicode letters and digits, ≥ 2 characters.
//
// Decisions the definition leaves open, fixed here:
// - "lowercased" is String.prototype.toLowerCase: Unicode default full case mapping, locale-independent
//   (the same as Rust's str::to_lowercase and Python's str.lower). So "İ" becomes "i" + U+0307 COMBINING
//   DOT ABOVE; the mark is not \p{L} or \p{N} and therefore splits the run ("İstanbul" → "stanbul").
// - No Unicode normalization: a decomposed "e" + U+0301 splits a word where the composed "é" does not.
// - "characters" are code points, not UTF-16 units: an astral letter such as "𝐀" counts as one.
// - Everything that is neither \p{L} nor \p{N} separates: spaces, punctuation, "_", "-", marks, emoji.

const RUN = /[\p{L}\p{N}]+/gu;

/** The token set of one text. */
export function tokenize(text: string): Set<string> {
  const tokens = new Set<string>();
  addTokens(tokens, text);
  return tokens;
}

/** Adds the tokens of `text` to `into` (case terms are the union over task and tags). */
export function addTokens(into: Set<string>, text: string): void {
  const runs = text.toLowerCase().match(RUN);
  if (runs === null) return;
  for (const run of runs) if (countCodePointsAtLeast2(run)) into.add(run);
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
