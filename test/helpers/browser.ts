// A real browser for the dashboard tests: Debian's chromium, headless, driven by playwright-core, with a fresh
// profile each time. Where there is none, the suites say why they are skipped (and fail under CRUX_REQUIRE_BROWSER=1).
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { tempDir } from './cli';

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

/** A browser with a fresh profile; `resolve` maps host names to 127.0.0.1 (a foreign Host header, as a rebinding attack sends). */
export async function launch(opts: { resolve?: string[] } = {}): Promise<BrowserContext> {
  const { chromium } = await import('playwright-core');
  const rules = (opts.resolve ?? []).map((host) => `MAP ${host} 127.0.0.1`).join(',');
  return chromium.launchPersistentContext(tempDir('crux-chromium-'), {
    executablePath: CHROMIUM,
    headless: true,
    args: [...FLAGS, ...(rules === '' ? [] : [`--host-resolver-rules=${rules}`])],
    viewport: { width: 1280, height: 900 },
  });
}

/** Where a screenshot goes: test-artifacts/ui/<name>.png (kept by CI as an artefact). */
export function artifact(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, `${name}.png`);
}
