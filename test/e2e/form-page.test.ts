import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CaptchaStandIn } from '../support/captcha-stand-in.js';
import { startOtherOrigin, type OtherOrigin } from '../support/other-origin.js';
import { launchBrowser, releaseBrowser } from './support/browser.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';

/**
 * A plain HTML form, no JavaScript, on a page of another origin on this machine
 * (`http://localhost:<port>`, while the service listens on `127.0.0.1:<port>`), submitted by a
 * real Chromium as multipart with a file: the record is stored with its file and the browser lands
 * on the page the form's `redirect` names. A page of an origin the collection does not list is
 * refused. The service runs as people run it (its built release), and its log is read for secrets.
 */
describe.skipIf(!inject('chromiumPresent'))('a plain HTML form on another origin', () => {
  const OWNER = { email: 'forms-owner@example.com', password: 'correct horse battery' };
  const CAPTCHA_SECRET = 'captcha-secret-that-must-never-be-logged';
  const standIn = new CaptchaStandIn();
  let service: LiveServer;
  let browser: Browser;
  let listed: OtherOrigin;
  let unlisted: OtherOrigin;
  let session: { cookie: string; workspaceId: string };
  let collectionId: string;

  /** The form page and the thank-you page, served from `localhost` on a port of its own. */
  const pageServer = (action: () => string): Promise<OtherOrigin> =>
    startOtherOrigin((origin) => ({
      '/thanks': '<!doctype html><title>Thanks</title><h1>Thank you!</h1>',
      '/form': () => `<!doctype html>
<title>Sign up</title>
<form method="post" enctype="multipart/form-data" action="${action()}">
  <label>Email <input name="email" type="email" required></label>
  <label>Age <input name="age" type="number"></label>
  <label><input name="subscribe" type="checkbox"> News</label>
  <label>CV <input name="cv" type="file"></label>
  <input type="hidden" name="redirect" value="${origin}/thanks">
  <button type="submit">Send</button>
</form>`,
    }));

  async function api(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${service.baseUrl}${url}`, {
      method,
      headers: { cookie: session.cookie, 'x-baas-workspace': session.workspaceId, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  }

  beforeAll(async () => {
    const verifyUrl = await standIn.start();
    service = await startLiveServer({
      PLAINBASE_OWNER_EMAIL: OWNER.email,
      PLAINBASE_OWNER_PASSWORD: OWNER.password,
      PLAINBASE_WEBHOOK_ALLOW_PRIVATE: '1',
      PLAINBASE_TURNSTILE_VERIFY_URL: verifyUrl,
      // Every request line and the CAPTCHA refusals, to check none carries a secret.
      PLAINBASE_LOG_LEVEL: 'info',
    });
    const signIn = await fetch(`${service.baseUrl}/v1/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(OWNER) });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.getSetCookie().find((line) => line.startsWith('plainbase_session='))!.split(';')[0]!;
    session = { cookie, workspaceId: ((await signIn.json()) as any).workspaces[0].id };
    listed = await pageServer(() => `${service.baseUrl}/v1/collections/${collectionId}/records`);
    unlisted = await pageServer(() => `${service.baseUrl}/v1/collections/${collectionId}/records`);
    const created = await api('POST', '/v1/collections', { name: 'signups', settings: { submissions: { enabled: true, origins: [listed.origin], ratePerMinute: 100 } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    collectionId = created.body.id;
    const schema = { type: 'object', properties: { email: { type: 'string' }, age: { type: 'integer' }, subscribe: { type: 'boolean' }, cv: { type: 'string' } }, required: ['email'] };
    expect((await api('POST', '/v1/collections/signups/schemas', { schema })).status).toBe(201);
    expect((await api('POST', '/v1/collections/signups/schemas/1/activate')).status).toBe(200);
    browser = await launchBrowser();
  }, 90_000);

  afterAll(async () => {
    await releaseBrowser(browser);
    await Promise.all([listed, unlisted].map((page) => page?.close()));
    await service?.stop();
    await standIn.stop();
  });

  async function openForm(origin: string): Promise<Page> {
    const context = await browser.newContext();
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await page.goto(`${origin}/form`);
    return page;
  }

  it('submits multipart with a file from a listed origin and lands on the redirect page', async () => {
    const page = await openForm(listed.origin);
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Age').fill('36');
    await page.getByLabel('CV').setInputFiles({ name: 'cv.txt', mimeType: 'text/plain', buffer: Buffer.from('Analytical engines, mostly.') });
    await Promise.all([page.waitForURL(`${listed.origin}/thanks`), page.getByRole('button', { name: 'Send' }).click()]);
    await expect.poll(() => page.getByRole('heading').textContent()).toBe('Thank you!');

    const [record] = (await api('GET', '/v1/collections/signups/records')).body.data;
    expect(record.data).toMatchObject({ email: 'ada@example.com', age: 36, subscribe: false });
    expect(record.files).toHaveLength(1);
    expect(record.data.cv).toBe(record.files[0]);
    const content = await api('GET', `/v1/collections/signups/files/${record.files[0]}/content`);
    expect(content.body).toBe('Analytical engines, mostly.');
  });

  it('refuses the same form on a page whose origin is not listed, and stores nothing', async () => {
    const before = (await api('GET', '/v1/collections/signups/records')).body.data.length;
    const page = await openForm(unlisted.origin);
    await page.getByLabel('Email').fill('eve@example.com');
    const [response] = await Promise.all([
      page.waitForResponse((answer) => answer.url().startsWith(`${service.baseUrl}/v1/collections/`)),
      page.getByRole('button', { name: 'Send' }).click(),
    ]);
    expect(response.status()).toBe(403);
    expect(((await response.json()) as any).error.code).toBe('ORIGIN_NOT_ALLOWED');
    expect(page.url()).not.toContain('/thanks');
    expect((await api('GET', '/v1/collections/signups/records')).body.data.length).toBe(before);
  });

  it('never writes the CAPTCHA secret or a token into its log', async () => {
    expect((await api('PATCH', '/v1/collections/signups', { settings: { submissions: { enabled: true, origins: [listed.origin], captcha: { provider: 'turnstile', secret: CAPTCHA_SECRET } } } })).status).toBe(200);
    const submit = (token: string) =>
      fetch(`${service.baseUrl}/v1/collections/${collectionId}/records`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: listed.origin },
        body: new URLSearchParams({ email: 'c@example.com', 'cf-turnstile-response': token }).toString(),
      });
    expect((await submit('pass-token-value')).status).toBe(201);
    expect((await submit('refused-token-value')).status).toBe(403);
    standIn.answer = () => 'silent';
    try {
      // The provider's silence: refused once the service's timeout (5 s by default) passes.
      expect((await submit('pass-but-unanswered')).status).toBe(403);
    } finally {
      standIn.answer = new CaptchaStandIn().answer;
    }
    expect(standIn.calls.map((call) => call.form.get('secret'))).toContain(CAPTCHA_SECRET);
    // The refusals were logged, with why, and without the secret or any token.
    await expect.poll(() => service.output(), { timeout: 10_000 }).toMatch(/CAPTCHA check refused a submission/);
    await expect.poll(() => service.output(), { timeout: 10_000 }).toMatch(/invalid-input-response/);
    await expect.poll(() => service.output(), { timeout: 10_000 }).toMatch(/no answer within/);
    const log = service.output();
    for (const secret of [CAPTCHA_SECRET, 'pass-token-value', 'refused-token-value', 'pass-but-unanswered']) expect(log).not.toContain(secret);
  }, 60_000);
});
