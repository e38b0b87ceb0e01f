import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newPersonContext, releaseBrowser, SCREENSHOTS } from './support/browser.js';
import { OWNER, startServerAndBrowser } from './support/dashboard.js';
import type { LiveServer } from './support/live-server.js';

/**
 * /docs is a working API console: in Chromium, a developer authorizes with an API key, tries out
 * GET /v1/me, and sees the key's own workspace answered, as swagger-ui shows it.
 */
describe.skipIf(!inject('chromiumPresent'))('the API console at /docs', () => {
  let server: LiveServer;
  let browser: Browser;
  let page: Page;
  let workspaceId: string;
  let secret: string;

  beforeAll(async () => {
    ({ server, browser } = await startServerAndBrowser());
    // An owner and a key of theirs, made with the API as a program would.
    const setup = await fetch(`${server.baseUrl}/v1/auth/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: server.setupToken, ...OWNER }),
    });
    expect(setup.status).toBe(201);
    const session = (await setup.json()) as { workspaces: { id: string }[] };
    workspaceId = session.workspaces[0]!.id;
    const cookie = setup.headers.getSetCookie()[0]!.split(';')[0]!;
    const key = await fetch(`${server.baseUrl}/v1/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-baas-workspace': workspaceId },
      body: JSON.stringify({ name: 'console', scopes: ['records:read'] }),
    });
    expect(key.status).toBe(201);
    secret = ((await key.json()) as { secret: string }).secret;
    // A fresh profile: no session cookie, so the key alone must carry the call.
    const context = await newPersonContext(browser, server.baseUrl);
    page = await context.newPage();
  }, 60_000);
  afterAll(async () => {
    await releaseBrowser(browser);
    await server?.stop();
  });

  it('authorizes with a key and tries out GET /v1/me: 200 with the key\'s workspace', async () => {
    await page.goto('/docs');
    // Branded Plainbase: its title, and its own mark and name in the top bar instead of the framework's logo.
    await expect.poll(() => page.title()).toBe('Plainbase API reference');
    const logo = page.locator('.topbar img').first();
    await logo.waitFor({ state: 'attached' });
    const src = (await logo.getAttribute('src')) ?? '';
    expect(Buffer.from(src.replace(/^data:image\/svg\+xml;base64,/, ''), 'base64').toString()).toContain('Plainbase');
    await page.getByRole('button', { name: 'Authorize' }).first().click();
    const dialog = page.locator('.modal-ux');
    // The bearer scheme's box (the session cookie has one too, which a browser fills by itself).
    const bearer = dialog.locator('.auth-container', { hasText: '(http, Bearer)' });
    await bearer.locator('#auth-bearer-value').fill(secret);
    // swagger-ui labels its buttons for screen readers: Authorize is "Apply credentials".
    await bearer.getByRole('button', { name: 'Apply credentials' }).click();
    await expect.poll(() => bearer.getByRole('button', { name: 'Remove authorization' }).count()).toBe(1);
    await bearer.getByRole('button', { name: 'Close' }).click();

    const me = page.locator('.opblock-get', { has: page.locator('[data-path="/v1/me"]') });
    await me.locator('.opblock-summary').first().click();
    await me.getByRole('button', { name: 'Try it out' }).click();
    await me.getByRole('button', { name: 'Execute' }).click();

    // The answer the server gave (below it, the document's list of possible answers).
    const answer = me.locator('.live-responses-table tr.response');
    await expect.poll(() => answer.locator('.response-col_status').textContent()).toContain('200');
    const body = JSON.parse((await answer.locator('.response-col_description pre.microlight').first().textContent())!) as { workspaceId: string; key: { name: string } };
    expect(body.workspaceId).toBe(workspaceId);
    expect(body.key.name).toBe('console');
    // The request the console shows is the one a program would send.
    expect(await me.locator('.curl-command').textContent()).toContain('Authorization: Bearer pb_');
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await me.screenshot({ path: path.join(SCREENSHOTS, 'api-console-me.png') });
  });
});
