import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser, releaseBrowser } from './e2e/support/browser.js';
import { KeyClient, signedInOwner, type Client } from './support/client.js';
import { startTestApp, type TestApp } from './support/harness.js';

/**
 * A page of another origin: a server on loopback of its own (a page the browser made up would
 * count as on the public internet, and Chromium keeps those from loopback addresses altogether).
 */
async function pageServer(): Promise<{ origin: string; server: http.Server }> {
  const server = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>page</title>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://localhost:${(server.address() as AddressInfo).port}`, server };
}

/**
 * What a real browser does with the service's CORS answers (the issue: "OPTIONS answers 404,
 * Chromium blocks the request at the preflight"): Chromium, pages of other origins, the service
 * listening on loopback. SQLite only: the answers themselves are tested on both engines in
 * cors.test.ts and public-submissions.test.ts; this is the browser's side.
 */
describe.skipIf(!inject('chromiumPresent'))('CORS in a browser (Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let owner: Client;
  let key: string;
  let formCol: string;
  let pages: { origin: string; server: http.Server }[] = [];
  let APP: string;
  let FORM: string;
  let STRANGER: string;
  beforeAll(async () => {
    pages = await Promise.all([pageServer(), pageServer(), pageServer()]);
    [APP, FORM, STRANGER] = pages.map((page) => page.origin) as [string, string, string];
    [t, browser] = await Promise.all([startTestApp('sqlite', { corsOrigins: [APP] }), launchBrowser()]);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('the service does not listen on a port');
    base = `http://127.0.0.1:${address.port}`;
    owner = await signedInOwner(t);
    formCol = (await owner.post('/v1/collections', { name: 'signups', settings: { submissions: { enabled: true, origins: [FORM] } } })).body.id;
    key = (await owner.post('/v1/keys', { name: 'page', scopes: ['records:read', 'records:create'] })).body.secret;
    expect((await new KeyClient(t, key).post('/v1/collections/signups/records', { data: { seeded: true } })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await releaseBrowser(browser);
    await t?.close();
    await Promise.all(pages.map(({ server }) => new Promise((resolve) => server.close(resolve))));
  });

  async function pageAt(origin: string): Promise<Page> {
    const context = await browser.newContext();
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await page.goto(`${origin}/page.html`);
    return page;
  }

  /** Runs a fetch in the page; a request the browser blocks comes back as `{blocked: message}`. */
  const call = (page: Page, url: string, init: Record<string, unknown>) =>
    page.evaluate(async ([target, options]) => {
      try {
        const response = await fetch(target as string, options as RequestInit);
        const text = await response.text();
        return { status: response.status, body: text ? JSON.parse(text) : null, etag: response.headers.get('etag'), requestId: response.headers.get('x-request-id') };
      } catch (error) {
        return { blocked: String(error) };
      }
    }, [url, init] as const);

  it('lets a listed origin use the data API with a key, reading the exposed headers; no management route, no cookie', async () => {
    const page = await pageAt(APP);
    const auth = { authorization: `Bearer ${key}` };
    const created = await call(page, `${base}/v1/collections/signups/records`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ data: { from: 'page' } }) });
    expect(created).toMatchObject({ status: 201, body: { data: { from: 'page' } }, etag: '"1"' });
    expect((created as { requestId: string }).requestId).toMatch(/^req_/);
    const listed = await call(page, `${base}/v1/collections/signups/records`, { headers: auth });
    expect((listed as { body: { data: unknown[] } }).body.data).toHaveLength(2);
    // An error answer is readable too.
    expect(await call(page, `${base}/v1/collections/nothing/records`, { headers: auth })).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    // Management routes answer no other origin: the browser stops at the preflight.
    expect(await call(page, `${base}/v1/keys`, { headers: auth })).toHaveProperty('blocked');
    // Credentials mode is refused by the browser itself: no answer allows credentials.
    expect(await call(page, `${base}/v1/collections/signups/records`, { credentials: 'include' })).toHaveProperty('blocked');
  });

  it('blocks a stranger origin at the preflight', async () => {
    const page = await pageAt(STRANGER);
    expect(await call(page, `${base}/v1/collections/signups/records`, { headers: { authorization: `Bearer ${key}` } })).toHaveProperty('blocked');
    expect(await call(page, `${base}/v1/collections/${formCol}/records`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: {} }) })).toHaveProperty('blocked');
  });

  it('lets a form page submit JSON to its collection without a key, and read the summary', async () => {
    const page = await pageAt(FORM);
    const submitted = await call(page, `${base}/v1/collections/${formCol}/records`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: { email: 'a@example.com' } }) });
    expect(submitted).toMatchObject({ status: 201, body: { collectionId: formCol, revision: 1 }, etag: null });
    expect((submitted as { body: Record<string, unknown> }).body.data).toBeUndefined();
    // The form's origin opens nothing else of the data API.
    expect(await call(page, `${base}/v1/collections/signups/records`, { headers: { authorization: `Bearer ${key}` } })).toHaveProperty('blocked');
    const records = (await owner.get('/v1/collections/signups/records')).body.data.map((record: { data: unknown }) => record.data);
    expect(records).toContainEqual({ email: 'a@example.com' });
  });
});
