import type { APIRequestContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startOtherOrigin, type OtherOrigin } from '../support/other-origin.js';
import { readClipboard } from './support/browser.js';
import { startDashboard, type Dashboard } from './support/dashboard.js';

/**
 * Public submissions in a real browser against the real service: an owner turns them on for a
 * collection, lists the sites allowed to post, sets a CAPTCHA secret that is never shown again,
 * and copies the HTML form; that very form, served by another site on loopback, posts a record
 * from the browser and comes back to the site; anonymous posts made with plain HTTP, accepted and
 * refused, show in the chart's figures; a viewer sees it all and can change nothing.
 */
describe.skipIf(!inject('chromiumPresent'))('dashboard: public submissions', () => {
  const CAPTCHA_SECRET = 'turnstile-secret-never-shown-0123456789';
  let d: Dashboard;
  let page: Page;
  let collectionId: string;
  /** Another web site on loopback, addressed by host name: it serves whatever `sitePage` holds, and a thank-you page. */
  let site: OtherOrigin;
  let siteOrigin: string;
  let sitePage = '';
  /** What the chart should count by the end: each test adds the submissions it made. */
  const expected = { accepted: 0, refused: 0 };

  const callApi = async (request: APIRequestContext, method: 'GET' | 'POST' | 'PATCH', url: string, data?: unknown) => {
    const response = await request.fetch(url, { method, data, headers: { 'x-baas-workspace': d.owner.workspaceId } });
    return { status: response.status(), body: (await response.json().catch(() => null)) as any };
  };

  /** A submission as a visitor's browser or a bot makes it: no credential, maybe an Origin header. */
  const submit = async (body: unknown, origin?: string) => {
    const response = await fetch(`${d.baseUrl}/v1/collections/${collectionId}/records`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(origin ? { origin } : {}) },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json().catch(() => null)) as any };
  };

  const textOf = async (locator: Locator) => (await locator.textContent())?.replace(/\s+/g, ' ').trim() ?? '';
  const panelOf = (on: Page) => on.getByRole('form', { name: 'Submissions' });

  beforeAll(async () => {
    site = await startOtherOrigin({ '/thanks': '<h1>Thank you</h1>', '/signup': () => `<!doctype html><title>Sign up</title>${sitePage}` });
    siteOrigin = site.origin;
    d = await startDashboard();
    page = d.page;
    const made = await callApi(d.context.request, 'POST', '/v1/collections', { name: 'signups' });
    expect(made.status).toBe(201);
    collectionId = made.body.id;
    const schema = { type: 'object', properties: { name: { type: 'string', minLength: 1 }, email: { type: 'string', format: 'email' } }, required: ['name', 'email'] };
    expect((await callApi(d.context.request, 'POST', '/v1/collections/signups/schemas', { schema })).status).toBe(201);
    expect((await callApi(d.context.request, 'POST', '/v1/collections/signups/schemas/1/activate')).status).toBe(200);
  }, 30_000);
  afterAll(async () => {
    await d?.stop();
    await site?.close();
  });

  it('turns submissions on with the allowed sites, saying what is wrong next to the field', async () => {
    d.explainFailure();
    await page.goto('/collections/signups');
    const panel = panelOf(page);
    await panel.waitFor();
    // Off at first: no snippet to paste yet.
    expect(await panel.getByRole('switch', { name: 'Accept submissions from web pages' }).isChecked()).toBe(false);
    expect(await page.getByRole('region', { name: 'Collect from a web page' }).count()).toBe(0);

    await panel.getByRole('switch', { name: 'Accept submissions from web pages' }).check();
    // A path after the host is caught before anything is sent, with what to write instead.
    await panel.getByLabel('Allowed origins').fill(`${siteOrigin}/signup`);
    await panel.getByRole('button', { name: 'Save submission settings' }).click();
    await panel.getByText(`${siteOrigin}/signup is not an origin: leave out the path and anything after the host and port (${siteOrigin}).`).waitFor();
    // * is allowed, with a clear warning.
    await panel.getByLabel('Allowed origins').fill(`${siteOrigin}\n*`);
    await panel.getByRole('note').filter({ hasText: '* lets any web site post to this collection' }).waitFor();
    await panel.getByLabel('Allowed origins').fill(`${siteOrigin}\nhttps://example.com`);
    await panel.getByRole('note').waitFor({ state: 'detached' });
    await panel.getByLabel('Submissions per minute, per visitor').fill('30');
    // What only the service checks is shown under its field too.
    await panel.getByLabel('Honeypot field (optional)').fill('your website');
    await panel.getByRole('button', { name: 'Save submission settings' }).click();
    const honeypotError = panel.locator('.field').filter({ has: page.getByLabel('Honeypot field (optional)') }).locator('.field-error');
    await honeypotError.waitFor();
    expect(await textOf(honeypotError)).toContain('settings.submissions.honeypot');
    expect((await callApi(d.context.request, 'GET', '/v1/collections/signups')).body.settings.submissions).toBeUndefined();

    // A field of the schema cannot be the trap: people fill it in.
    await panel.getByLabel('Honeypot field (optional)').fill('email');
    await panel.getByRole('button', { name: 'Save submission settings' }).click();
    await panel.getByText('email is a field of the active schema: people fill it in').waitFor();
    await panel.getByLabel('Honeypot field (optional)').fill('website');
    await panel.getByRole('button', { name: 'Save submission settings' }).click();
    await panel.getByRole('status').filter({ hasText: 'Submission settings saved.' }).waitFor();
    expect((await callApi(d.context.request, 'GET', '/v1/collections/signups')).body.settings.submissions).toEqual({
      enabled: true,
      origins: [siteOrigin, 'https://example.com'],
      ratePerMinute: 30,
      honeypot: 'website',
    });
    await d.shot('submissions-settings');
  });

  it('sets a CAPTCHA secret that is never shown again; a submission without its token is refused', async () => {
    const panel = panelOf(page);
    await panel.getByLabel('CAPTCHA', { exact: true }).selectOption({ label: 'Cloudflare Turnstile' });
    // A provider needs its secret before anything is sent.
    await panel.getByRole('button', { name: 'Save submission settings' }).click();
    await panel.getByText('Paste the secret key of your Cloudflare Turnstile site.').waitFor();
    await panel.getByLabel('CAPTCHA secret key').fill(CAPTCHA_SECRET);
    await panel.getByRole('button', { name: 'Save submission settings' }).click();
    await panel.getByRole('status').filter({ hasText: 'Submission settings saved.' }).waitFor();

    await page.reload();
    await panelOf(page).getByText('CAPTCHA secret: set.').waitFor();
    expect(await page.content()).not.toContain(CAPTCHA_SECRET);
    expect(await panelOf(page).getByLabel('CAPTCHA secret key').count()).toBe(0);
    expect((await callApi(d.context.request, 'GET', '/v1/collections/signups')).body.settings.submissions.captcha).toEqual({ provider: 'turnstile' });
    // The snippet carries the provider's widget.
    const snippets = page.getByRole('region', { name: 'Collect from a web page' });
    expect(await textOf(snippets.getByLabel('HTML form'))).toContain('class="cf-turnstile"');
    await d.shot('submissions-captcha-set');

    // Saving again without touching the secret keeps it (a post without a token is still refused for it).
    await panelOf(page).getByLabel('Submissions per minute, per visitor').fill('20');
    await panelOf(page).getByRole('button', { name: 'Save submission settings' }).click();
    await panelOf(page).getByRole('status').filter({ hasText: 'Submission settings saved.' }).waitFor();
    const refused = await submit({ data: { name: 'Bot', email: 'bot@example.com' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('CAPTCHA_FAILED');
    expected.refused += 1;

    // None removes the CAPTCHA and its secret.
    await panelOf(page).getByLabel('CAPTCHA', { exact: true }).selectOption({ label: 'None' });
    await panelOf(page).getByText('Saving removes the CAPTCHA and its secret.').waitFor();
    await panelOf(page).getByRole('button', { name: 'Save submission settings' }).click();
    await panelOf(page).getByRole('status').filter({ hasText: 'Submission settings saved.' }).waitFor();
    expect((await callApi(d.context.request, 'GET', '/v1/collections/signups')).body.settings.submissions.captcha).toBeUndefined();
  });

  it('gives a fetch snippet that, run on a page of an allowed site, stores a record from the browser', async () => {
    const snippets = page.getByRole('region', { name: 'Collect from a web page' });
    await snippets.getByRole('button', { name: 'Copy JavaScript (fetch)' }).click();
    const script = await readClipboard(page);
    expect(script).toContain(`fetch("${d.baseUrl}/v1/collections/${collectionId}/records"`);
    expect(script).not.toContain('captchaToken');
    await d.shot('submissions-snippets');

    // Cross-origin, as on the real site: the service must answer the page's origin for the browser to read the answer.
    sitePage = `<script type="module">\n${script}\ndocument.title = 'Created ' + created.id;\n</script>`;
    const visitor = await d.newContext();
    const sitePageOpen = await visitor.newPage();
    await sitePageOpen.goto(`${siteOrigin}/signup`);
    await sitePageOpen.waitForFunction(() => document.title.startsWith('Created rec_'));
    await visitor.close();
    expected.accepted += 1;
    const records = await callApi(d.context.request, 'GET', '/v1/collections/signups/records');
    expect(records.body.data.map((record: { data: unknown }) => record.data)).toEqual([{ name: 'text', email: 'ada@example.com' }]);
  });

  it('gives an HTML form that, pasted into a page of an allowed site, posts a record from the browser and comes back', async () => {
    const snippets = page.getByRole('region', { name: 'Collect from a web page' });
    await snippets.getByRole('button', { name: 'Copy HTML form' }).click();
    const html = await readClipboard(page);
    expect(html).toContain(`action="${d.baseUrl}/v1/collections/${collectionId}/records"`);
    expect(html).toContain('name="website" tabindex="-1"');
    expect(html).toContain(`<input type="hidden" name="redirect" value="${siteOrigin}/thanks">`);

    sitePage = html;
    const visitor = await d.newContext();
    const form = await visitor.newPage();
    await form.goto(`${siteOrigin}/signup`);
    await form.getByLabel('name', { exact: true }).fill('Grace Hopper');
    await form.getByLabel('email', { exact: true }).fill('grace@example.com');
    // The honeypot is there for bots, but off-screen: people never fill it in.
    expect((await form.locator('input[name="website"]').boundingBox())!.x).toBeLessThan(0);
    await d.shot('submissions-form-on-site', form);
    await Promise.all([form.waitForURL(`${siteOrigin}/thanks`), form.getByRole('button', { name: 'Send' }).click()]);
    await form.getByRole('heading', { name: 'Thank you' }).waitFor();
    await visitor.close();
    expected.accepted += 1;
    const records = await callApi(d.context.request, 'GET', '/v1/collections/signups/records?sort=-createdAt&limit=1');
    expect(records.body.data[0].data).toEqual({ name: 'Grace Hopper', email: 'grace@example.com' });
  });

  it('shows accepted and refused submissions of the last 24 hours in the chart', async () => {
    expect((await submit({ data: { name: 'Ada', email: 'ada@example.com' } })).status).toBe(201);
    expect((await submit({ data: { name: 'Alan', email: 'alan@example.com' } }, siteOrigin)).status).toBe(201);
    expected.accepted += 2;
    const foreign = await submit({ data: { name: 'Eve', email: 'eve@example.com' } }, 'https://evil.example');
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('ORIGIN_NOT_ALLOWED');
    // A bot that fills in the honeypot is told it worked, and nothing is kept.
    expect((await submit({ data: { name: 'Bot', email: 'bot@example.com', website: 'https://spam.example' } })).status).toBe(201);
    expected.refused += 2;

    // The chart reads its figures again when the tab comes back into focus (and every minute).
    await page.evaluate(() => window.dispatchEvent(new Event('visibilitychange')));
    const chart = page.getByRole('region', { name: 'Submissions in the last 24 hours' });
    const summary = `${expected.accepted} accepted, ${expected.refused} refused in the last 24 hours: 1 from a site not allowed, 1 CAPTCHA missing or failed, 1 honeypot filled in (bots).`;
    await chart.locator('.chart-summary').filter({ hasText: summary }).waitFor();
    expect(await chart.getByRole('img', { name: /Submissions in the last 24 hours/ }).count()).toBe(1);
    // One bar an hour, each with its figures as a tooltip; together they make the day's.
    const hours = await chart.locator('svg > g > title').allTextContents();
    expect(hours).toHaveLength(24);
    const totals = hours.map((title) => /: (\d+) accepted, (\d+) refused$/.exec(title)!).reduce((sum, match) => [sum[0]! + Number(match[1]), sum[1]! + Number(match[2])], [0, 0]);
    expect(totals).toEqual([expected.accepted, expected.refused]);
    expect((await callApi(d.context.request, 'GET', '/v1/collections/signups/records')).body.data).toHaveLength(expected.accepted);
    await d.shot('submissions-chart');
  });

  it('shows a viewer the settings, the snippets and the chart, and lets them change nothing', async () => {
    const invite = await callApi(d.context.request, 'POST', '/v1/invites', { email: 'vera@example.com', role: 'viewer' });
    expect(invite.status).toBe(201);
    const viewer = await d.newContext({ narrow: true }); // a phone: the panel and the chart fit its width
    const accepted = await viewer.request.post(`/v1/invites/${invite.body.token}/accept`, { data: { name: 'Vera Viewer', password: 'viewer password 123' } });
    expect(accepted.status()).toBe(200);
    const viewerPage = await viewer.newPage();
    d.explainFailure([page, viewerPage]);
    await viewerPage.goto('/collections/signups');
    const panel = panelOf(viewerPage);
    await panel.getByText('Your role (viewer) can read these settings but not change them.').waitFor();
    expect(await panel.getByRole('switch', { name: 'Accept submissions from web pages' }).isChecked()).toBe(true);
    expect(await panel.getByRole('switch', { name: 'Accept submissions from web pages' }).isDisabled()).toBe(true);
    expect(await panel.getByLabel('Allowed origins').inputValue()).toBe(`${siteOrigin}\nhttps://example.com`);
    for (const control of await panel.locator('input, textarea, select').all()) expect(await control.isDisabled()).toBe(true);
    expect(await panel.getByRole('button').count()).toBe(0);
    await viewerPage.getByRole('region', { name: 'Collect from a web page' }).waitFor();
    expect(await textOf(viewerPage.locator('.chart-summary'))).toMatch(new RegExp(`^${expected.accepted} accepted, ${expected.refused} refused in the last 24 hours`));
    // Nothing pushes the page wider than the phone (a snippet's long Copy button did, before its caption wrapped).
    expect(await viewerPage.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await d.shot('submissions-viewer', viewerPage);
    // The API refuses the viewer too; the settings stay as they were.
    const refused = await callApi(viewer.request, 'PATCH', '/v1/collections/signups', { settings: { submissions: { enabled: false, origins: [] } } });
    expect(refused.status).toBe(403);
    expect((await callApi(d.context.request, 'GET', '/v1/collections/signups')).body.settings.submissions.enabled).toBe(true);
    await viewer.close();
  });
});
