import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser, releaseBrowser } from './e2e/support/browser.js';
import { startOtherOrigin, type OtherOrigin } from './support/other-origin.js';
import { startSdkWorld, type SdkWorld } from './support/sdk-world.js';

/**
 * The HTML page of docs/forms.md works when copied: its ```html block, with only the service's
 * address, the collection's id and the site's origin put in place of the examples', served from
 * another origin than the service's and sent by Chromium with no JavaScript of ours. SQLite only:
 * the form route is tested on both engines by its own files.
 */
const DOC = readFileSync(new URL('../docs/forms.md', import.meta.url), 'utf8');
const EXAMPLE = { service: 'https://data.example.com', site: 'https://www.example.com', collection: 'col_01JEXAMPLE0000000000000000' };

function documentedPage(): string {
  const blocks = [...DOC.matchAll(/^```html\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
  expect(blocks, 'docs/forms.md has one ```html block').toHaveLength(1);
  return blocks[0]!;
}

describe.skipIf(!inject('chromiumPresent'))('the form page of docs/forms.md, copied to a site (Chromium)', () => {
  let w: SdkWorld;
  let browser: Browser;
  let site: OtherOrigin;
  /** The same page on a site the collection does not list. */
  let stranger: OtherOrigin;
  let collectionId: string;

  beforeAll(async () => {
    [w, browser] = await Promise.all([startSdkWorld('sqlite'), launchBrowser()]);
    const created = await w.main.owner.post('/v1/collections', { name: 'waiting_list' });
    expect(created.status).toBe(201);
    collectionId = created.body.id;
    const page = documentedPage();
    // Every example value the page holds is replaced: a missed one would post to example.com.
    for (const value of Object.values(EXAMPLE)) expect(page).toContain(value);
    const pages = (origin: string) => ({
      '/join.html': page.replaceAll(EXAMPLE.service, w.base).replaceAll(EXAMPLE.collection, collectionId).replaceAll(EXAMPLE.site, origin),
      '/thanks.html': '<!doctype html><meta charset="utf-8"><title>Thanks</title><h1>Thanks!</h1>',
    });
    [site, stranger] = await Promise.all([startOtherOrigin(pages), startOtherOrigin(pages)]);
    const settings = { submissions: { enabled: true, origins: [site.origin], honeypot: 'website' } };
    const enabled = await w.main.owner.patch(`/v1/collections/${collectionId}`, { settings });
    expect(enabled.status, JSON.stringify(enabled.body)).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await releaseBrowser(browser);
    await Promise.all([w?.close(), site?.close(), stranger?.close()]);
  });

  async function openForm(on: OtherOrigin = site): Promise<Page> {
    const context = await browser.newContext();
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await page.goto(`${on.origin}/join.html`);
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Anything to add?').fill('Count me in.');
    return page;
  }

  async function records(): Promise<{ data: Record<string, unknown> }[]> {
    const list = await w.main.owner.get(`/v1/collections/${collectionId}/records`);
    expect(list.status).toBe(200);
    return list.body.data;
  }

  it('stores what a visitor sends and lands on the thank-you page', async () => {
    const page = await openForm();
    await Promise.all([page.waitForURL(`${site.origin}/thanks.html`), page.getByRole('button', { name: 'Send' }).click()]);
    await expect(page.getByRole('heading', { name: 'Thanks!' }).isVisible()).resolves.toBe(true);
    // The honeypot and the redirect are not data.
    expect((await records()).map((record) => record.data)).toEqual([{ name: 'Ada Lovelace', email: 'ada@example.com', message: 'Count me in.' }]);
  });

  it('answers a bot that fills in the honeypot as if stored, and stores nothing', async () => {
    const before = await records();
    const page = await openForm();
    // A bot fills every field it finds, hidden or not.
    await page.locator('input[name="website"]').evaluate((input: HTMLInputElement) => (input.value = 'https://spam.example'));
    await Promise.all([page.waitForURL(`${site.origin}/thanks.html`), page.getByRole('button', { name: 'Send' }).click()]);
    expect(await records()).toEqual(before);
  });

  it('refuses the same page copied to a site the collection does not list', async () => {
    const before = await records();
    const page = await openForm(stranger);
    // A form post needs no preflight: the browser sends it, the service refuses it (no redirect
    // to a site it does not know), and the browser shows the answer.
    await Promise.all([page.waitForURL(`${w.base}/v1/collections/${collectionId}/records`), page.getByRole('button', { name: 'Send' }).click()]);
    expect(JSON.parse(await page.locator('body').innerText())).toMatchObject({ error: { code: 'ORIGIN_NOT_ALLOWED' } });
    expect(await records()).toEqual(before);
  });
});
