// The dashboard's gate (SPEC §12): Host before method before secret; the token or its cookie, compared whole.
import { describe, expect, it } from 'vitest';
import { cookieHeader, cookieName, hostAllowed, judge } from '../../../src/cli/ui/guard';

const b = { host: '127.0.0.1', port: 4242, token: 'a'.repeat(32) };
const ask = (over: Partial<Parameters<typeof judge>[1]>) => judge(b, { method: 'GET', host: '127.0.0.1:4242', cookie: undefined, token: null, ...over });

describe('the dashboard gate', () => {
  it('allows the bound address and localhost at the bound port only', () => {
    for (const host of ['127.0.0.1:4242', 'localhost:4242', 'LocalHost:4242']) expect(hostAllowed(b, host), host).toBe(true);
    for (const host of [
      undefined,
      '',
      '127.0.0.1',
      'localhost',
      '127.0.0.1:4243',
      'evil.example:4242',
      'localhost.evil.example:4242',
      '127.0.0.1:4242@evil',
      '[::1]:4242',
      '127.0.0.1:04242x',
    ])
      expect(hostAllowed(b, host), String(host)).toBe(false);
    const v6 = { ...b, host: '[::1]' };
    expect(hostAllowed(v6, '[::1]:4242')).toBe(true);
    expect(hostAllowed(v6, '127.0.0.1:4242')).toBe(false);
  });

  it('judges the Host first, then the method, then the token or the cookie', () => {
    expect(ask({ host: 'evil.example:4242', method: 'POST' })).toMatchObject({ ok: false, status: 403 });
    expect(ask({ method: 'POST', token: b.token })).toMatchObject({ ok: false, status: 405 });
    expect(ask({ method: 'HEAD' })).toMatchObject({ ok: false, status: 401 });
    expect(ask({})).toMatchObject({ ok: false, status: 401 });
    expect(ask({ token: b.token })).toEqual({ ok: true, setCookie: true });
    expect(ask({ token: `${b.token}x` })).toMatchObject({ ok: false, status: 401 });
    expect(ask({ token: '' })).toMatchObject({ ok: false, status: 401 });
    // A wrong token in the address is refused even with a good cookie: the address is what the person opened.
    expect(ask({ token: 'wrong', cookie: `${cookieName(b)}=${b.token}` })).toMatchObject({ ok: false, status: 401 });
  });

  it('takes the cookie of its own port only, among others', () => {
    expect(ask({ cookie: `x=1; ${cookieName(b)}=${b.token}; y=2` })).toEqual({ ok: true, setCookie: false });
    expect(ask({ cookie: `crux_ui_4243=${b.token}` })).toMatchObject({ ok: false, status: 401 });
    expect(ask({ cookie: `${cookieName(b)}=${b.token.slice(1)}` })).toMatchObject({ ok: false, status: 401 });
  });

  it('sets an HttpOnly, SameSite=Strict cookie for the whole site', () => {
    expect(cookieHeader(b)).toBe(`crux_ui_4242=${b.token}; HttpOnly; SameSite=Strict; Path=/`);
  });
});
