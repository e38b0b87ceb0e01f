import type { APIRequestContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { COLOR_RULES, LAYOUT_RULES, seriousViolations } from './support/accessibility.js';
import { startDashboard, type Dashboard } from './support/dashboard.js';
import { layoutProblems } from './support/layout-check.js';

/**
 * Every main page of the dashboard, at 1366 x 768 and at 390 x 844 (a phone), light and dark:
 * axe-core finds no serious or critical problem, nothing sticks out of the window or covers
 * something else, and a screenshot of each is saved (test-results/screenshots/page-<name>-<size>-<theme>.png).
 * One browser, one page per person, a few records, each page opened once.
 */
describe.skipIf(!inject('chromiumPresent'))('dashboard: every page, both sizes, both themes', () => {
  const SIZES = { wide: { width: 1366, height: 768 }, phone: { width: 390, height: 844 } } as const;
  const THEMES = ['light', 'dark'] as const;
  let d: Dashboard;
  let signedOut: Page;
  let webhookId = '';

  const call = async (request: APIRequestContext, method: 'POST' | 'DELETE', url: string, data?: unknown) => {
    const response = await request.fetch(url, { method, data, headers: { 'x-baas-workspace': d.owner.workspaceId } });
    const body = (await response.json().catch(() => null)) as any;
    if (response.status() >= 300) throw new Error(`${method} ${url}: ${response.status()} ${JSON.stringify(body)}`);
    return body;
  };

  /** Waits until the page shows its title and nothing says it is still loading. */
  const settle = async (page: Page) => {
    await page.locator('h1').first().waitFor();
    await page.waitForFunction(() => !document.querySelector('.loading, [aria-busy="true"]'));
  };

  /**
   * Each size and theme of a page, opened once (resizing the window re-lays it out). axe runs in
   * full once (wide, light); then what each change can alter: the contrast rules in dark, the
   * layout rules on the phone. The layout is measured and a screenshot saved in all four.
   */
  const checkEverywhere = async (page: Page, name: string, open: () => Promise<void>) => {
    const found: string[] = [];
    await page.setViewportSize(SIZES.wide);
    await page.emulateMedia({ colorScheme: 'light' });
    await open();
    await settle(page);
    for (const [size, viewport] of Object.entries(SIZES)) {
      await page.setViewportSize(viewport);
      for (const theme of THEMES) {
        await page.emulateMedia({ colorScheme: theme });
        const rules = size === 'wide' ? (theme === 'light' ? undefined : COLOR_RULES) : theme === 'light' ? LAYOUT_RULES : null;
        for (const violation of rules === null ? [] : await seriousViolations(page, rules ? { only: rules } : {})) {
          found.push(`${size} ${theme}: ${violation.impact} ${violation.rule} (${violation.help}) at ${violation.targets.slice(0, 3).join(', ')}`);
        }
        for (const problem of await layoutProblems(page)) found.push(`${size} ${theme}: ${problem}`);
        await d.shot(`page-${name}-${size}-${theme}`, page);
      }
    }
    expect(found, `${name} at ${page.url()}`).toEqual([]);
  };

  beforeAll(async () => {
    d = await startDashboard({ env: { PLAINBASE_WEBHOOK_ALLOW_PRIVATE: '1' } });
    const request = d.context.request;
    const leads = await call(request, 'POST', '/v1/collections', { name: 'leads', settings: { description: 'People who asked about the product' } });
    await call(request, 'POST', '/v1/collections', { name: 'old_survey' });
    await call(request, 'DELETE', '/v1/collections/old_survey');
    await call(request, 'POST', `/v1/collections/${leads.id}/schemas`, {
      schema: { type: 'object', properties: { name: { type: 'string' }, plan: { type: 'string', enum: ['free', 'pro'] }, age: { type: 'integer', minimum: 0 } }, required: ['name'] },
    });
    await call(request, 'POST', `/v1/collections/${leads.id}/schemas/1/activate`);
    for (const [name, plan, age] of [['Ada', 'pro', 36], ['Grace', 'free', 45], ['Linus', 'pro', 28]] as const) {
      await call(request, 'POST', `/v1/collections/${leads.id}/records`, { data: { name, plan, age } });
    }
    const upload = await request.fetch(`/v1/collections/${leads.id}/files?name=brochure.txt`, {
      method: 'POST',
      data: Buffer.from('A brochure.\n'),
      headers: { 'content-type': 'text/plain', 'x-baas-workspace': d.owner.workspaceId },
    });
    expect(upload.status()).toBe(201);
    await call(request, 'POST', '/v1/keys', { name: 'Importer', scopes: ['records:read', 'records:create'], collections: [leads.id] });
    const robot = await call(request, 'POST', '/v1/service-accounts', { name: 'Nightly sync', role: 'editor' });
    await call(request, 'POST', '/v1/keys', { name: 'Sync key', scopes: ['records:read'], serviceAccountId: robot.id });
    webhookId = (await call(request, 'POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] })).id;
    await call(request, 'POST', '/v1/invites', { email: 'eddie@example.com', role: 'editor' });
    signedOut = await (await d.newContext()).newPage();
  }, 30_000);
  afterAll(async () => {
    await d?.stop();
  });

  const signedInPages: [name: string, path: string][] = [
    ['collections', '/'],
    ['records', '/collections/leads/records'],
    ['schemas', '/collections/leads/schemas'],
    ['summary', '/collections/leads/summary'],
    ['files', '/collections/leads/files'],
    ['settings', '/collections/leads'],
    ['trash', '/trash'],
    ['keys', '/keys'],
    ['service-accounts', '/service-accounts'],
    ['webhooks', '/webhooks'],
    ['webhook', '/webhooks/:id'],
    ['members', '/members'],
    ['audit-log', '/audit-log'],
    ['backups', '/backups'],
    ['account', '/account'],
  ];

  it('lists each collection with its record count, and remembers the Dark theme chosen in the menu', async () => {
    const page = d.page;
    await page.setViewportSize(SIZES.wide);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto('/');
    const leads = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'leads', exact: true }) });
    await leads.getByRole('cell', { name: '3', exact: true }).waitFor();
    const paper = () => page.evaluate(() => getComputedStyle(document.querySelector('.topbar')!).backgroundColor);
    const light = await paper();
    await page.getByLabel('Theme').selectOption('dark');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    expect(await paper()).not.toBe(light);
    // Kept in this browser, and applied before the page shows anything at the next visit.
    await page.reload();
    await page.locator('h1').first().waitFor();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    expect(await page.getByLabel('Theme').inputValue()).toBe('dark');
    await page.getByLabel('Theme').selectOption('system');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBeUndefined();
    expect(await paper()).toBe(light);
  });

  it('creates a collection with the keyboard alone, and lands on its records', async () => {
    const page = d.page;
    await page.goto('/');
    await page.locator('h1').first().waitFor();
    // The first Tab reaches the skip link, shown while focused, with a visible focus ring.
    await page.keyboard.press('Tab');
    const focused = page.locator(':focus');
    expect(await focused.textContent()).toBe('Skip to content');
    expect(await focused.evaluate((element) => getComputedStyle(element).outlineStyle)).toBe('solid');
    await page.keyboard.press('Enter');
    // From the content, Tab on to the form's Name field, type, and press Enter to create.
    const name = page.getByLabel('Name', { exact: true });
    for (let i = 0; i < 30 && !(await name.evaluate((element) => element === document.activeElement)); i++) await page.keyboard.press('Tab');
    await page.keyboard.type('by_keyboard');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'by_keyboard: records' }).waitFor();
  });

  it('names what the audit log\'s ids stand for, and a webhook on every collection as "all"', async () => {
    const page = d.page;
    await page.goto('/audit-log?action=webhook.created');
    const row = page.getByRole('row').filter({ hasText: 'webhook.created' });
    await row.getByText('http://127.0.0.1:9/hook').first().waitFor();
    const details = await row.locator('.detail-list').innerText();
    expect(details).toMatch(/collections:\s*all/);
    await page.goto('/audit-log?action=key.created');
    await page.getByRole('row').filter({ hasText: 'Importer' }).getByText('leads').first().waitFor();
  });

  it('says, when signing in at another address than PLAINBASE_PUBLIC_URL, which address to use', async () => {
    const localhost = d.baseUrl.replace('127.0.0.1', 'localhost');
    const elsewhere = await (await d.browser.newContext({ baseURL: localhost })).newPage();
    await elsewhere.goto('/sign-in');
    await elsewhere.getByLabel('Email').fill(d.owner.email);
    await elsewhere.getByLabel('Password').fill(d.owner.password);
    await elsewhere.getByRole('button', { name: 'Sign in' }).click();
    const alert = elsewhere.getByRole('alert');
    await alert.waitFor();
    const text = await alert.innerText();
    expect(text).toContain(`accepts changes only from its own address, ${d.baseUrl}`);
    expect(text).toContain('PLAINBASE_PUBLIC_URL');
    expect(text).toContain(`This page is at ${localhost}.`);
    await d.shot('sign-in-other-origin', elsewhere);
  });

  it.each(signedInPages)('%s (%s)', async (name, path) => {
    d.explainFailure();
    await checkEverywhere(d.page, name, () => d.page.goto(path.replace(':id', webhookId)).then(() => undefined));
  });

  it.each([
    ['sign-in', '/sign-in'],
    ['setup', '/setup?token=not-a-token'],
  ])('%s (%s), signed out', async (name, path) => {
    d.explainFailure([signedOut]);
    await checkEverywhere(signedOut, name, () => signedOut.goto(path).then(() => undefined));
  });
});
