import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`); never a downloaded browser. */
export const CHROMIUM = process.env.PLAINBASE_TEST_CHROMIUM ?? '/usr/bin/chromium';

export const SCREENSHOTS = fileURLToPath(new URL('../../../test-results/screenshots/', import.meta.url));

/** The one Chromium of this test process, launched at the first file that needs it. */
let shared: Promise<Browser> | null = null;

/**
 * The browser of this test process: launched once and kept for the files that follow in the same
 * worker (vitest.config.ts runs a worker's files one after another in one process), since a launch
 * costs a second or two of a busy machine. Playwright ends it when the process exits. A file gives
 * it back with releaseBrowser, never close().
 */
export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM}: run \`apt-get install -y chromium\` (.ci/run does it when missing).`);
  }
  shared ??= chromium.launch({ executablePath: CHROMIUM }).then((browser) => {
    browser.on('disconnected', () => (shared = null));
    return browser;
  });
  return shared.catch((error: unknown) => {
    shared = null;
    throw error;
  });
}

/** Ends what a file opened in the shared browser (its profiles and their pages), leaving it for the next file. */
export async function releaseBrowser(browser: Browser | undefined): Promise<void> {
  if (!browser) return;
  await Promise.all(browser.contexts().map((context) => context.close()));
}

/**
 * A fresh browser profile for one person: its own cookies, allowed to use the clipboard on the
 * service (the copy buttons), and failing within the test's timeout (20 s a step: a first page on
 * a busy two-core machine can take over 10).
 */
export async function newPersonContext(browser: Browser, baseUrl: string, options: { narrow?: boolean } = {}): Promise<BrowserContext> {
  const context = await browser.newContext({
    baseURL: baseUrl,
    viewport: options.narrow ? { width: 390, height: 844 } : { width: 1280, height: 860 },
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  context.setDefaultTimeout(20_000);
  return context;
}

/** Saves a full-page screenshot as test-results/screenshots/<name>.png (CI prints the folder). */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** What the page's copy button put on the clipboard. */
export async function readClipboard(page: Page): Promise<string> {
  return page.evaluate(() => navigator.clipboard.readText());
}
