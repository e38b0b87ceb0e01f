import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { onTestFailed } from 'vitest';
import { launchBrowser, newPersonContext, releaseBrowser, screenshot } from './browser.js';
import { startLiveServer, type LiveServer } from './live-server.js';

/**
 * One line for an e2e file: a live service, a browser, and a page already signed in as the
 * owner (made through the setup API with the printed token, the way the setup page does it).
 *
 *   const d = await startDashboard();
 *   await d.page.goto('/keys');               // paths are relative to d.baseUrl
 *   await d.shot('keys-list');                // test-results/screenshots/keys-list.png
 *   const other = await d.newContext();       // a second person, own cookies
 *   await d.stop();
 */
export interface Dashboard {
  baseUrl: string;
  server: LiveServer;
  browser: Browser;
  /** The owner's browser profile and its page, on the collections page of their first workspace. */
  context: BrowserContext;
  page: Page;
  owner: { email: string; name: string; password: string; personId: string; workspaceId: string };
  /** A fresh profile (no cookies) for another person. */
  newContext(options?: { narrow?: boolean }): Promise<BrowserContext>;
  /** Screenshot of a page (the owner's by default) under test-results/screenshots/<name>.png. */
  shot(name: string, page?: Page): Promise<string>;
  /**
   * Call at the start of a test: if it fails, what each page shows, the requests its browser
   * profile sent and never saw answered, whether the service still answers /readyz, and the end
   * of the service's log are printed with the failure (a browser test that fails on a busy CI
   * machine cannot be watched, and a timeout alone does not say what the page showed instead).
   */
  explainFailure(pages?: Page[]): void;
  stop(): Promise<void>;
}

export const OWNER = { email: 'owner@example.com', name: 'Olivia Owner', password: 'correct horse battery staple' };

/**
 * The live service and a browser, started side by side: the service takes seconds to start (it
 * compiles its TypeScript on load), and the browser launches meanwhile. Neither is left running
 * when the other fails.
 */
export async function startServerAndBrowser(env?: Record<string, string>): Promise<{ server: LiveServer; browser: Browser }> {
  const [server, browser] = await Promise.allSettled([startLiveServer(env), launchBrowser()]);
  if (server.status === 'fulfilled' && browser.status === 'fulfilled') return { server: server.value, browser: browser.value };
  if (server.status === 'fulfilled') await server.value.stop();
  if (browser.status === 'fulfilled') await releaseBrowser(browser.value);
  throw server.status === 'rejected' ? server.reason : (browser as PromiseRejectedResult).reason;
}

/** The requests a browser profile has sent and not yet seen answered, with when each was sent. */
const unanswered = new WeakMap<BrowserContext, Map<Request, number>>();

function trackRequests(context: BrowserContext): BrowserContext {
  const open = new Map<Request, number>();
  unanswered.set(context, open);
  context.on('request', (request) => open.set(request, Date.now()));
  context.on('requestfinished', (request) => open.delete(request));
  context.on('requestfailed', (request) => open.delete(request));
  return context;
}

/** What a failing browser test should print: each page, its unanswered requests, the service's health and log. */
async function describeFailure(server: LiveServer, pages: Page[]): Promise<void> {
  for (const shown of pages) {
    const text = await shown.locator('body').innerText({ timeout: 2000 }).catch((error: Error) => `(unreadable: ${error.message})`);
    const waiting = [...(unanswered.get(shown.context())?.entries() ?? [])].map(([request, at]) => `  ${request.method()} ${request.url()} (${Date.now() - at} ms)`);
    console.log(`page ${shown.url()} shows:\n${text}\nrequests not answered:\n${waiting.join('\n') || '  none'}`);
  }
  const ready = await fetch(`${server.baseUrl}/readyz`, { signal: AbortSignal.timeout(3000) }).then(
    async (response) => `${response.status} ${await response.text()}`,
    (error: Error) => `no answer (${error.message})`,
  );
  console.log(`service /readyz: ${ready}\nservice log (end):\n${server.output().slice(-8000)}`);
}

export async function startDashboard(options: { env?: Record<string, string> } = {}): Promise<Dashboard> {
  const { server, browser } = await startServerAndBrowser(options.env);
  try {
    const context = trackRequests(await newPersonContext(browser, server.baseUrl));
    // The context's request client shares its cookies: the session cookie lands in the browser.
    const setup = await context.request.post('/v1/auth/setup', { data: { token: server.setupToken, ...OWNER } });
    if (setup.status() !== 201) throw new Error(`setup failed: ${setup.status()} ${await setup.text()}`);
    const body = (await setup.json()) as { person: { id: string }; workspaces: { id: string }[] };
    const page = await context.newPage();
    await page.goto('/');
    return {
      baseUrl: server.baseUrl,
      server,
      browser,
      context,
      page,
      owner: { ...OWNER, personId: body.person.id, workspaceId: body.workspaces[0]!.id },
      newContext: async (contextOptions) => trackRequests(await newPersonContext(browser, server.baseUrl, contextOptions)),
      shot: (name, target = page) => screenshot(target, name),
      explainFailure: (pages = [page]) => onTestFailed(() => describeFailure(server, pages)),
      stop: async () => {
        await releaseBrowser(browser);
        await server.stop();
      },
    };
  } catch (error) {
    await releaseBrowser(browser);
    await server.stop();
    throw error;
  }
}
