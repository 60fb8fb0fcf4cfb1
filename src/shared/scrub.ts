// Free text as it may be stored and shown: every URL in it without its credentials (SPEC §7).

// scheme://userinfo@ — userinfo is everything up to the last "@" before the host part ends.
const URL_WITH_USERINFO = /\b([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^\s/?#@]*(?:@[^\s/?#@]*)*@/g;

export function scrubText(text: string): string {
  return text.replace(URL_WITH_USERINFO, '$1');
}

export function scrubOptional(text: string | undefined | null): string | undefined {
  return text == null ? undefined : scrubText(text);
}
