// Who may ask `crux ui` anything (SPEC §12): the bound Host only (DNS rebinding), GET and HEAD only, and the
// token of the printed URL or the cookie it was exchanged for. Pure: the server hands it what the request says.
import { timingSafeEqual } from 'node:crypto';

/** Every response's headers: no inline script, nothing from another origin, never framed, never cached. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

export interface Binding {
  /** The address as the URL spells it (an IPv6 one in brackets). */
  readonly host: string;
  readonly port: number;
  readonly token: string;
}

export interface Asked {
  readonly method: string | undefined;
  readonly host: string | undefined;
  readonly cookie: string | undefined;
  /** The `token` query parameter, when there is one. */
  readonly token: string | null;
}

export type Verdict = { readonly ok: true; readonly setCookie: boolean } | { readonly ok: false; readonly status: 401 | 403 | 405; readonly message: string };

/** The cookie's name carries the port: two dashboards on one host keep a cookie each. */
export const cookieName = (b: Binding) => `crux_ui_${b.port}`;

export const cookieHeader = (b: Binding) => `${cookieName(b)}=${b.token}; HttpOnly; SameSite=Strict; Path=/`;

/** The Host header's name and port, lower-cased; undefined when it is not one. */
function parseHost(raw: string): { name: string; port: number | undefined } | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(raw.trim());
  if (m === null) return undefined;
  return { name: m[1]!.toLowerCase(), port: m[2] === undefined ? undefined : Number(m[2]) };
}

/** Whether `raw` names the bound address or localhost, at the bound port. */
export function hostAllowed(b: Binding, raw: string | undefined): boolean {
  if (raw === undefined) return false;
  const host = parseHost(raw);
  if (host === undefined) return false;
  const port = host.port ?? 80;
  return port === b.port && (host.name === b.host.toLowerCase() || host.name === 'localhost');
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const e = Buffer.from(expected);
  return a.length === e.length && timingSafeEqual(a, e);
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The Host first (a foreign one learns nothing, not even the methods), then the method, then the secret. */
export function judge(b: Binding, asked: Asked): Verdict {
  if (!hostAllowed(b, asked.host)) return { ok: false, status: 403, message: 'this dashboard answers only to its own address or localhost' };
  if (asked.method !== 'GET' && asked.method !== 'HEAD') return { ok: false, status: 405, message: 'the dashboard is read-only: only GET and HEAD' };
  if (asked.token !== null) {
    return sameSecret(asked.token, b.token) ? { ok: true, setCookie: true } : { ok: false, status: 401, message: 'wrong token: open the URL crux ui printed' };
  }
  const cookie = cookieValue(asked.cookie, cookieName(b));
  if (cookie !== undefined && sameSecret(cookie, b.token)) return { ok: true, setCookie: false };
  return { ok: false, status: 401, message: 'no token: open the URL crux ui printed' };
}
