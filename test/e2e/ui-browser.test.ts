// `crux ui` in a real browser (headless chromium): every page renders over both kinds of store, at desktop and
// phone widths (screenshots kept in test-artifacts/ui/ in CI's run: helpers/browser.ts SCREENSHOTS), stored markup
// stays text, no script runs from the store, the CSP is never violated, the token and Host rules hold for a browser
// too, and another process's write appears.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { crux, FULL, freshStore, STORE_KINDS, tempDir } from '../helpers/cli';
import { browserSkipReason, closeBrowser, launch, screenshot } from '../helpers/browser';
import { startUi, type RunningUi } from '../helpers/ui';
import { ATTENTION, HOSTILE_TASK, LONG_ID, populate, populateAttention, UI_NOW } from '../helpers/ui-store';

// page.evaluate's functions run in the page (the CSP forbids evaluating strings there): its globals declared here.
declare const document: any, location: any, window: any, HashChangeEvent: any, getComputedStyle: any;

const skip = browserSkipReason();
if (skip !== undefined && process.env.CRUX_REQUIRE_BROWSER === '1') throw new Error(`CRUX_REQUIRE_BROWSER=1 but ${skip}`);
// One chromium for the file; each suite and the cookie-less visitor a context of their own.
afterAll(closeBrowser);

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
    // Judged at the time the store was written (freshness, expiry, the chart's 7 days), whatever the day the suite runs.
    ui = await startUi(store, [], { CRUX_NOW: UI_NOW });
    browser = await launch();
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

  it('renders every page, at desktop and phone widths (screenshots in test-artifacts/ui/ in CI)', async () => {
    for (const [name, hash, heading] of PAGES) {
      for (const [width, height, label] of [
        [1280, 900, 'desktop'],
        [390, 844, 'phone'],
      ] as const) {
        await page.setViewportSize({ width, height });
        await visit(hash, heading);
        // Nothing wider than the screen but the tables' own scrolling boxes.
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), `${name} at ${width}`).toBe(true);
        await screenshot(page, `${kind}-${name}-${label}`);
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
    // The graph's colours have a legend.
    expect(await page.locator('#graph-legend').textContent()).toMatch(/an agent[\s\S]*outstanding/);
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
    const other = await launch();
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

/** What every dashboard test of a page checks: nothing wider than the screen, and no header or button broken inside a word. */
async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push(`page ${document.documentElement.scrollWidth} px wide in ${window.innerWidth}`);
    for (const node of document.querySelectorAll('th, button, nav a, .pager a, a.json')) {
      const r = node.getBoundingClientRect();
      const line = Number.parseFloat(getComputedStyle(node).lineHeight) || 20;
      // Shown (the phone layout hides table headers) and taller than one line: broken inside.
      if (r.height > 0 && r.height > line * 1.9 + 16) out.push(`"${node.textContent}" wraps (${Math.round(r.height)} px)`);
    }
    return out;
  });
}

describe.skipIf(skip !== undefined)(`crux ui says what needs attention, at 2,000 sessions and cases${skip === undefined ? '' : ` (skipped: ${skip})`}`, () => {
  let store: string;
  let ui: RunningUi;
  let empty: RunningUi;
  let browser: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  async function visit(hash: string): Promise<void> {
    const before = await page.evaluate(() => document.body.dataset.rendered ?? '0');
    await page.evaluate((h) => {
      if (location.hash === h) window.dispatchEvent(new HashChangeEvent('hashchange'));
      else location.hash = h;
    }, hash);
    await page.waitForFunction((b) => (document.body.dataset.rendered ?? '0') !== b, before);
  }
  const text = (selector: string) => page.locator(selector).first().textContent();

  beforeAll(async () => {
    store = freshStore('dir');
    await populateAttention(store, tempDir());
    ui = await startUi(store, [], { CRUX_NOW: UI_NOW });
    empty = await startUi(freshStore('dir'), [], { CRUX_NOW: UI_NOW });
    browser = await launch();
    page = await browser.newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    await page.goto(`${ui.base}/?token=${ui.token}`);
    await page.waitForFunction(() => document.body.dataset.rendered !== undefined);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    for (const u of [ui, empty]) {
      u?.proc.kill('SIGTERM');
      await u?.proc;
    }
  });

  it('opens with what needs attention, each count true (stranded without the archived) and a link to its list', async () => {
    await page.setViewportSize({ width: 1400, height: 900 });
    await visit('#/');
    const cards: [string, number][] = [
      ['failed', ATTENTION.failedRecently],
      ['expired', ATTENTION.expiredUnreaped],
      ['expiring', ATTENTION.expiringSoon],
      ['stranded', ATTENTION.stranded],
    ];
    // The first thing on the page is what needs attention, damage first.
    expect(await page.locator('main h3').first().textContent()).toBe('Needs attention');
    expect(await page.locator('.attention-cards > section').first().getAttribute('id')).toBe('attention-damage');
    await page.waitForFunction(() => document.getElementById('health')?.textContent?.includes('healthy'));
    for (const [id, count] of cards) expect(await text(`#attention-${id} a.count`), id).toBe(String(count));
    // The failed sessions are listed by name, newest first, each a link to its page.
    const failed = await page.locator('#attention-failed .few li').allTextContents();
    expect(failed).toHaveLength(5);
    for (const row of failed) expect(row).toMatch(/^(chart-failed|failed|abandoned)-\d+\s+(failed|abandoned) /);
    // Each card's link leads to its list: the first card's clicked, the others' followed (each clicked in CI's run).
    const links = await Promise.all(cards.map(([id]) => page.locator(`#attention-${id} a.count`).getAttribute('href')));
    for (const [i, [id, count]] of cards.entries()) {
      if (FULL || i === 0) {
        await visit('#/');
        const before = await page.evaluate(() => document.body.dataset.rendered);
        await page.locator(`#attention-${id} a.count`).click();
        await page.waitForFunction((b) => document.body.dataset.rendered !== b, before);
      } else await visit(links[i]!);
      expect(await page.evaluate(() => location.hash), id).toMatch(/^#\/sessions\?/);
      expect(await text('#total strong'), id).toBe(String(count));
      const rows = await page.locator('main tbody tr').count();
      expect(rows, id).toBe(Math.min(50, count));
      if (id === 'failed') for (const o of await page.locator('main tbody tr td:nth-child(4)').allTextContents()) expect(o).toMatch(/^(failed|abandoned)$/);
      if (id === 'stranded') expect(await page.locator('main tbody').textContent()).not.toMatch(/parked-|archived/);
    }
    expect(problems).toEqual([]);
  });

  it('pages and sorts the sessions list, with its total and an outcome column', async () => {
    await visit('#/sessions?stranded=1&sort=updated');
    expect(await text('#total')).toMatch(new RegExp(`^${ATTENTION.stranded} sessions stranded · 1–50 shown`));
    await page.locator('.pager a[rel=next]').click();
    await page.waitForFunction(() => document.getElementById('total')?.textContent?.includes('51–100'));
    await visit('#/sessions?status=all');
    expect(await text('#total strong')).toBe(String(ATTENTION.total));
    expect(await page.locator('main thead th').allTextContents()).toContain('outcome');
    await page.locator('main thead th a', { hasText: 'tokens' }).click();
    await page.waitForFunction(() => location.hash.includes('sort=tokens'));
    await page.waitForFunction(() => document.querySelector('main th[aria-sort]') !== null);
    const tokens = (await page.locator('main tbody tr td:nth-child(7)').allTextContents()).map(Number);
    expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
  });

  it('shows the case page, with its outcome and context, and its JSON twin at the same address under /api', async () => {
    await visit('#/cases/c_attention_00000');
    expect(await text('#case-outcome')).toBe('rotated; two services restarted by hand');
    expect(await text('#case-context')).toContain('the vault was sealed');
    expect(await page.locator('a.json').getAttribute('href')).toBe('/api/cases/c_attention_00000');
    const doc: any = await page.evaluate(async () => (await fetch('/api/cases/c_attention_00000')).json());
    expect(doc.case).toMatchObject({ case_id: 'c_attention_00000', outcome: 'rotated; two services restarted by hand' });
    // From the list, a case's task leads to its page.
    await visit('#/cases');
    expect(await page.locator('main tbody tr a[href^="#/cases/c_attention_"]').count()).toBeGreaterThan(0);
    expect(await text('#cases-total')).toMatch(new RegExp(`^${ATTENTION.cases} cases, newest first · 1–50 shown`));
  });

  it('sets failures apart in the activity chart, in a colour of their own, with a legend', async () => {
    await visit('#/');
    expect(await page.locator('.chart rect.c-failed').count()).toBe(ATTENTION.chartFailures);
    const fill = (cls: string) => page.locator(`.chart .legend .swatch.${cls}`).evaluate((n) => getComputedStyle(n).backgroundColor);
    const colours = await Promise.all(['c-failed', 'c-closes', 'c-puts', 'c-reaps'].map(fill));
    expect(new Set(colours).size).toBe(4);
    expect(await page.locator('.chart .legend').textContent()).toContain('closed: failed or abandoned');
  });

  it('cuts a 185-character id with … and shows it whole on hover and on its own page, the layout intact', async () => {
    expect(LONG_ID).toHaveLength(185);
    await visit(`#/sessions?q=${LONG_ID.slice(0, 30)}`);
    const link = page.locator('main tbody a.cut').first();
    expect(await link.getAttribute('title')).toBe(LONG_ID);
    const box = await link.evaluate((n) => ({ shown: n.clientWidth, whole: n.scrollWidth, overflow: getComputedStyle(n).textOverflow }));
    expect(box.overflow).toBe('ellipsis');
    expect(box.whole).toBeGreaterThan(box.shown);
    await link.click();
    await page.waitForSelector('#whole-id');
    expect(await text('#whole-id')).toBe(LONG_ID);
    expect(await layoutProblems(page)).toEqual([]);
  });

  it('renders every page at 1400 and 700 px, light and dark (dark at 1400 in CI), without overflow (screenshots in CI)', async () => {
    const pages: [string, string][] = [
      ['overview', '#/'],
      ['sessions', '#/sessions?status=all'],
      ['stranded', '#/sessions?stranded=1&sort=updated'],
      ['long-id', `#/sessions?q=${LONG_ID.slice(0, 30)}`],
      ['session', `#/session/claude-code/${encodeURIComponent(LONG_ID)}`],
      ['cases', '#/cases'],
      ['case', '#/cases/c_attention_00000'],
      ['handoffs', '#/handoffs'],
    ];
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of scheme === 'light' || FULL ? [1400, 700] : [700]) {
        await page.setViewportSize({ width, height: 900 });
        for (const [name, hash] of pages) {
          await visit(hash);
          // The journals' check comes last: the screenshot waits for its verdict.
          if (name === 'overview') await page.waitForFunction(() => document.getElementById('health')?.textContent?.includes('verified'));
          expect(await layoutProblems(page), `${name} at ${width} ${scheme}`).toEqual([]);
          await screenshot(page, `attention-${name}-${width}-${scheme}`);
        }
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    expect(problems).toEqual([]);
  });

  it('says how to add data on an empty store: no blank card, no chart axis', async () => {
    const fresh = await browser.newPage();
    try {
      await fresh.goto(`${empty.base}/?token=${empty.token}`);
      await fresh.waitForFunction(() => document.body.dataset.rendered !== undefined);
      for (const scheme of ['light', 'dark'] as const) {
        await fresh.emulateMedia({ colorScheme: scheme });
        for (const width of [1400, 700]) {
          await fresh.setViewportSize({ width, height: 900 });
          const main = await fresh.locator('main').textContent();
          for (const said of ['This store is empty', 'crux session put', 'crux case record']) expect(main).toContain(said);
          expect(await fresh.locator('.chart').count()).toBe(0);
          // Every card says something beside its title.
          const said = await fresh
            .locator('.card')
            .evaluateAll((cards) => cards.map((c: any) => [...c.children].filter((ch: any) => ch.tagName !== 'H3' && ch.textContent.trim() !== '').length));
          for (const n of said) expect(n).toBeGreaterThan(0);
          expect(await layoutProblems(fresh)).toEqual([]);
          await screenshot(fresh, `empty-overview-${width}-${scheme}`);
        }
      }
      for (const hash of ['#/sessions', '#/cases', '#/handoffs']) {
        await fresh.evaluate((h) => (location.hash = h), hash);
        await fresh.waitForFunction(() => document.querySelector('main .empty-state pre') !== null);
        expect(await fresh.locator('main .empty-state').first().textContent(), hash).toMatch(/crux /);
      }
    } finally {
      await fresh.close();
    }
  });

  it('lists the records that hold a secret on the journal page, by journal and kind, never the value (last: it adds a session)', async () => {
    await visit('#/journal');
    expect(await page.locator('main').innerText()).toContain('none: no record holds a secret');
    // A state is kept byte for byte (SPEC §7): what a secret in one looks like to the operator.
    const token = 'ghp_Zq3Xw9Lk2Pm8Rt5Yv1Bn6Cx4Dz7Fa0Gh3Jk9';
    expect((await crux(store, ['session', 'put', 'holds-a-token', JSON.stringify({ token })])).exitCode).toBe(0);
    await visit('#/journal');
    const text = await page.locator('main').innerText();
    expect(text).toMatch(/sessions\.jsonl\s+github-token\s+1/);
    expect(text).toContain('crux journal redact');
    expect(text).not.toContain(token);
  });
});
