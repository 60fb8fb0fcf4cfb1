// Cases on an encrypted store (SPEC §13): what of a case lies sealed, and the words `case retrieve` matches as
// keyed hashes.
//
// A recorded or imported case's free text (task, context, action, outcome, source receipt) is sealed at its
// case (codec/cipher.ts); its id, tags, reward, success, times and reuse count stay plain. Its retrieval terms
// (tokens of the task and of each tag, SPEC §5) are written beside the sealed text, in the record's plain field
// `terms_hmac`: each term as HMAC-SHA256 under a key derived from the store key (HKDF-SHA256, info
// `crux-case-terms-v1`), the first 16 bytes in lowercase hex. A case's bank (cache/, and the term table a
// streamed build fills) is built from those hashes without the key, and a query's words are hashed the same
// way, so the sets compared — and so every similarity and every ranking — are exactly a plain store's:
// distinct words give distinct hashes (a collision among 2^128 values is not expected), equal words equal ones.
// A hash is 32 hex digits: one run of tokenize's alphanumerics, so the domain's tokenizer gives it back as it is.
import type { SealedFields } from '../../journal/codec/store-spec';
import { givenKey, isSealed, storeSealMode } from '../../journal/codec/cipher';
import { keyNeeded, type StoreKey } from '../../shared/store-key';
import { caseTerms, tokenize } from './tokenize';

export const CASES_FILE = 'cases.jsonl';

/** The payload field that holds a sealed case's terms as keyed hashes. */
const TERMS_HMAC = 'terms_hmac';

const TEXT = { task: 'task', context: 'context', action: 'action', outcome: 'outcome', source_receipt: 'source_receipt' } as const;

export const CASE_SEALED: SealedFields = {
  fields: { 'case.recorded': TEXT, 'case.imported': TEXT },
  entity: (data) => String(data.case_id),
  derive(plain, key) {
    if (key === undefined) {
      if (!(TERMS_HMAC in plain)) return plain;
      const { [TERMS_HMAC]: _, ...rest } = plain;
      return rest;
    }
    if (typeof plain.task !== 'string') return plain;
    const tags = Array.isArray(plain.tags) ? plain.tags.filter((t): t is string => typeof t === 'string') : [];
    const hash = termHasher(key);
    return { ...plain, [TERMS_HMAC]: [...caseTerms(plain.task, tags)].map(hash) };
  },
};

const crypto = () => require('node:crypto') as typeof import('node:crypto');

const MEMO = 1 << 16;
let hasher: { id: string; hash: (term: string) => string } | undefined;

/** The keyed hash of a term under `key`'s term key. */
function termHasher(key: StoreKey): (term: string) => string {
  if (hasher?.id !== key.id) {
    const { createHmac, hkdfSync } = crypto();
    const termKey = Buffer.from(hkdfSync('sha256', key.bytes, Buffer.alloc(0), 'crux-case-terms-v1', 32));
    // Words repeat across cases (an import of 100k cases hashes ~1M words, most of them a few thousand distinct ones).
    const known = new Map<string, string>();
    const hash = (term: string): string => {
      let h = known.get(term);
      if (h === undefined) {
        h = createHmac('sha256', termKey).update(term, 'utf8').digest('hex').slice(0, 32);
        if (known.size >= MEMO) known.clear();
        known.set(term, h);
      }
      return h;
    };
    hasher = { id: key.id, hash };
  }
  return hasher.hash;
}

/**
 * The words a query or a tag is looked up by, as the store indexes them: tokenize's words on a plain store,
 * their keyed hashes on an encrypted one; without its key (or with another) exit 6 naming the key id it needs.
 */
export function indexTerms(text: string): Set<string> {
  const words = tokenize(text);
  const mode = storeSealMode();
  if (mode.kind === 'plain') return words;
  if (mode.kind === 'locked') throw keyNeeded(mode.keyId, givenKey());
  const hash = termHasher(mode.key);
  return new Set([...words].map(hash));
}

/**
 * A folded case's terms as its record holds them: the keyed hashes of a sealed case (as one "tag" each, which
 * tokenize gives back as they are), or its task and tags for a plain one.
 */
export function foldedTerms(body: Record<string, unknown>, task: string, tags: string[]): { task: string; tags: string[] } {
  if (!isSealed(task)) return { task, tags };
  const hashes = body[TERMS_HMAC];
  return { task: '', tags: Array.isArray(hashes) ? hashes.filter((h): h is string => typeof h === 'string' && h.length === HASH_DIGITS) : [] };
}

const HASH_DIGITS = 32;
