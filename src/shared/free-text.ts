// Free text as crux keeps it (SPEC §7), the one function every way in calls before anything is stored, indexed,
// signed or shown: what the user marked `<private>` replaced by `[private]`, URLs without their credentials,
// and every secret replaced by `[redacted:KIND]`.
import { redactSecrets } from './secrets';
import { scrubText } from './scrub';

// `<private>…</private>`, case-insensitive, across lines; an unclosed one hides the rest of the text.
const PRIVATE_SPAN = /<private\s*>[\s\S]*?(?:<\/private\s*>|$)/gi;

/** `text` without what the user marked private: each span is `[private]`. */
export function hidePrivate(text: string): string {
  return text.length >= 9 && /<private/i.test(text) ? text.replace(PRIVATE_SPAN, '[private]') : text;
}

/** `text` as it may be kept: private spans hidden, URL credentials removed, secrets redacted. */
export function keptText(text: string): string {
  return redactSecrets(scrubText(hidePrivate(text)));
}
