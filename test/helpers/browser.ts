// A real browser for the dashboard tests: Debian's chromium, headless, driven by playwright-core, one a test file,
// with a fresh context (cookies and storage of its own) each time. Where there is none, the suites say why they are
// skipped (and fail under CRUX_REQUIRE_BROWSER=1).
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FULL } from './cli';

export const CHROMIUM = process.env.CRUX_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = resolve(__dirname, '../../test-artifacts/ui');

/** Why the browser tests cannot run here, or undefined when they can. */
export function browserSkipReason(): string | undefined {
  if (!existsSync(CHROMIUM)) return `no chromium at ${CHROMIUM} (apt-get install -y chromium)`;
  try {
    require.resolve('playwright-core');
  } catch {
    return 'playwright-core is not installed (npm ci)';
  }
  return undefined;
}

/** The host names a rebinding test reaches this machine by. */
const RESOLVE = ['rebind.example'];

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let shared: Promise<Browser> | undefined;

/**
 * A fresh browser context (its own cookies, storage and cache, nothing shared with another context) in the one
 * chromium this test file starts (closeBrowser ends it); host names mapped to 127.0.0.1 for every context (a
 * foreign Host header, as a rebinding attack sends).
 */
export async function launch(): Promise<BrowserContext> {
  shared ??= import('playwright-core').then(({ chromium }) =>
    chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [...FLAGS, `--host-resolver-rules=${RESOLVE.map((host) => `MAP ${host} 127.0.0.1`).join(',')}`],
    }),
  );
  return (await shared).newContext({ viewport: { width: 1280, height: 900 } });
}

/** Ends this file's chromium (after its suites). */
export async function closeBrowser(): Promise<void> {
  const browser = shared;
  shared = undefined;
  await (await browser)?.close();
}

/** Where a screenshot goes: test-artifacts/ui/<name>.png (kept by CI as an artefact). */
export function artifact(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, `${name}.png`);
}

/**
 * Whether the dashboard's screenshots are taken: in CI's run (CRUX_TEST_FULL, whose test-artifacts/ui/ is kept) and
 * with CRUX_TEST_SCREENSHOTS=1; `npm test` checks the same layouts without them (a full-page PNG each, about a
 * third of the browser file's CPU).
 */
export const SCREENSHOTS = FULL || process.env.CRUX_TEST_SCREENSHOTS === '1';

/** A full-page screenshot of `page` as test-artifacts/ui/<name>.png, when SCREENSHOTS. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (SCREENSHOTS) await page.screenshot({ path: artifact(name), fullPage: true });
}
