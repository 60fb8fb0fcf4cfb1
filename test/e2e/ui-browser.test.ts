// `crux ui` in a real browser (headless chromium): every page renders over both kinds of store, at desktop and
// phone widths (screenshots kept in test-artifacts/ui/), stored markup stays text, no script runs from the store,
// the CSP is never violated, the token and Host rules hold for a browser too, and another process's write appears.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { crux, freshStore, STORE_KINDS } from '../helpers/cli';
import { artifact, browserSkipReason, launch } from '../helpers/browser';
import { startUi, type RunningUi } from '../helpers/ui';
import { HOSTILE_TASK, populate } from '../helpers/ui-store';

// The functions handed to page.evaluate run in the page (the CSP forbids evaluating strings there); this file is
// typed for Node, so the page's globals are declared for them.
declare const document: any;
declare const location: any;
declare const window: any;
declare const HashChangeEvent: any;

const skip = browserSkipReason();
if (skip !== undefined && process.env.CRUX_REQUIRE_BROWSER === '1') throw new Error(`CRUX_REQUIRE_BROWSER=1 but ${skip}`);

const PAGES: [string, string, string][] = [
  ['overview', '#/', 'Overview'],
  ['sessions', '#/sessions', 'Sessions'],
  ['session', '#/session/planner/plan-1', 'plan-1'],
  ['cases', `#/cases?task=${encodeURIComponent('renew the tls certificate')}`, 'Cases'],
  ['handoffs', '#/handoffs', 'Handoffs'],
  ['journal', '#/journal', 'Journal'],
];

describe.skipIf(skip !== undefined).each(STORE_KINDS)(`crux ui in chromium on a %s store${skip === undefined ? '' : ` (skipped: ${skip})`}`, (kind) => {
  let store: string;
  let ui: RunningUi;
  let browser: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  /** Goes to a page of the dashboard and waits until it has rendered it. */
  async function visit(hash: string, heading: string): Promise<void> {
    const before = await page.evaluate(() => document.body.dataset.rendered ?? '0');
    await page.evaluate((h) => {
      // The same address again is no hashchange: the page is asked to render anew as the router would.
      if (location.hash === h) window.dispatchEvent(new HashChangeEvent('hashchange'));
      else location.hash = h;
    }, hash);
    await page.waitForFunction((b) => (document.body.dataset.rendered ?? '0') !== b, before);
    await expect(page.locator('main h2').first().textContent()).resolves.toContain(heading);
  }

  beforeAll(async () => {
    store = freshStore(kind);
    await populate(store);
    ui = await startUi(store);
    browser = await launch({ resolve: ['rebind.example'] });
    page = await browser.newPage();
    page.on('dialog', (d) => {
      problems.push(`a dialog opened: ${d.message()}`);
      void d.dismiss();
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/401|403/.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(ui.base) && !r.url().startsWith('http://rebind.example') && !r.url().startsWith('http://localhost'))
        problems.push(`a request elsewhere: ${r.url()}`);
    });
    await page.goto(`${ui.base}/?token=${ui.token}`);
    await page.waitForFunction(() => document.body.dataset.rendered !== undefined);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    ui?.proc.kill('SIGTERM');
    await ui?.proc;
  });

  it('drops the token from the address once it is a cookie', async () => {
    expect(page.url()).toBe(`${ui.base}/`);
    const cookies = await browser.cookies(ui.base);
    expect(cookies).toEqual([expect.objectContaining({ name: `crux_ui_${ui.port}`, httpOnly: true, sameSite: 'Strict' })]);
    expect(await page.evaluate(() => document.cookie)).toBe('');
  });

  it('renders every page, at desktop and phone widths (screenshots in test-artifacts/ui/)', async () => {
    for (const [name, hash, heading] of PAGES) {
      for (const [width, height, label] of [
        [1280, 900, 'desktop'],
        [390, 844, 'phone'],
      ] as const) {
        await page.setViewportSize({ width, height });
        await visit(hash, heading);
        // Nothing wider than the screen but the tables' own scrolling boxes.
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), `${name} at ${width}`).toBe(true);
        await page.screenshot({ path: artifact(`${kind}-${name}-${label}`), fullPage: true });
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(problems).toEqual([]);
  });

  it('shows the overview: counts, the stranded session first, the activity chart, success by tag, journals', async () => {
    await visit('#/', 'Overview');
    const text = await page.locator('main').innerText();
    expect(text).toContain('build-1');
    expect(text).toMatch(/tls\s+50% of 2/);
    expect(await page.locator('.chart svg rect').count()).toBeGreaterThan(0);
    await page.waitForFunction(() => document.getElementById('health')?.textContent?.includes('healthy'));
  });

  it("shows a session's history with the difference between two versions", async () => {
    await visit('#/session/planner/plan-1', 'plan-1');
    const versions = page.locator('.timeline li button');
    expect(await versions.count()).toBe(3);
    // The newest put (#2; the newest record is the handoff) against the first.
    await versions.nth(1).click();
    await page.waitForSelector('.diff pre');
    const lines = async (selector: string) => (await page.locator(selector).allInnerTexts()).map((t) => t.replace(/\n$/, ''));
    expect(await lines('.diff .add')).toEqual(expect.arrayContaining(['+   "step": 2,', '+     "c"']));
    expect(await lines('.diff .del')).toEqual(expect.arrayContaining(['-   "step": 1,', '-     "a",']));
  });

  it('renders stored markup as text: a state with </script>, a hostile case task; controls escaped', async () => {
    await visit('#/session/planner/plan-2', 'plan-2');
    expect(await page.locator('#state-exact').textContent()).toContain('</script><script>alert(2)</script>');
    // A raw bidi override and a raw C1 control (JSON lets both stand in a string) show as their escapes.
    for (const view of ['#state-exact', '#state-pretty']) {
      const text = (await page.locator(view).textContent())!;
      expect(text, view).toContain('\\u202e');
      expect(text, view).toContain('\\x85');
      expect(text, view).not.toMatch(/[\u202e\u0085]/);
    }
    expect(await page.locator('main').innerText()).toContain('done: <b>bold</b>');
    expect(await page.locator('main b, main script').count()).toBe(0);
    await visit('#/cases', 'Cases');
    expect(await page.locator('main').innerText()).toContain(HOSTILE_TASK);
    expect(await page.locator('main img').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('retrieves by task text with the similarity of each result', async () => {
    await visit(`#/cases?task=${encodeURIComponent('renew the tls certificate')}`, 'Cases');
    const rows = await page.locator('main table').first().locator('tbody tr').allInnerTexts();
    expect(rows[0]).toMatch(/^1\.000/);
    expect(rows[0]).toContain('renew the tls certificate');
    expect(rows.length).toBe(2);
  });

  it('draws the handoff graph of agents', async () => {
    await visit('#/handoffs', 'Handoffs');
    expect(await page.locator('.graph .node text').allTextContents()).toEqual(['builder', 'planner']);
    await page.locator('.checks button').first().click();
    await page.waitForSelector('.checks .badge');
    expect(await page.locator('.checks .badge').first().textContent()).toMatch(/^[a-z_]+: (ok|failed|skipped)$/);
    expect(await page.locator('.graph line.edge title').textContent()).toMatch(/^planner → builder: 1 package\(s\), [01] outstanding$/);
  });

  it('shows a write by another process without a reload', async () => {
    await visit('#/sessions', 'Sessions');
    const started = Date.now();
    const put = await crux(store, ['--agent', 'shell', 'session', 'put', 'from-the-shell', '{"hello":1}']);
    expect(put.exitCode).toBe(0);
    await page.waitForFunction(() => document.querySelector('main')?.textContent?.includes('from-the-shell'), undefined, { timeout: 10_000 });
    const latency = Date.now() - started;
    if (process.env.CRUX_STRESS) console.log(`crux ui (${kind}): a put from the shell appeared on the page after ${latency} ms`);
    if (process.env.CRUX_STRESS) expect(latency).toBeLessThan(2000);
  });

  it('holds the token and Host rules for a browser: no cookie is 401, a rebinding host 403', async () => {
    const other = await launch({ resolve: ['rebind.example'] });
    try {
      const fresh = await other.newPage();
      expect((await fresh.goto(`${ui.base}/`))?.status()).toBe(401);
      expect((await fresh.goto(`${ui.base}/api/sessions`))?.status()).toBe(401);
      expect((await fresh.goto(`http://rebind.example:${ui.port}/?token=${ui.token}`))?.status()).toBe(403);
      expect((await fresh.goto(`http://localhost:${ui.port}/?token=${ui.token}`))?.status()).toBe(200);
      expect(await fresh.locator('main h2').first().textContent()).toBe('Overview');
    } finally {
      await other.close();
    }
  });
});
