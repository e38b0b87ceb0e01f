import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newPersonContext, releaseBrowser, screenshot } from './support/browser.js';
import { startServerAndBrowser } from './support/dashboard.js';
import type { LiveServer } from './support/live-server.js';

/**
 * A new user's first minutes, in Chromium against the real service: the printed setup link
 * creates the owner, who signs out and in again, creates a second workspace and switches
 * between the two.
 */
describe.skipIf(!inject('chromiumPresent'))('first run in the browser', () => {
  let server: LiveServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const owner = { name: 'Ada Owner', email: 'ada@example.com', password: 'a long enough password' };

  beforeAll(async () => {
    ({ server, browser } = await startServerAndBrowser());
    context = await newPersonContext(browser, server.baseUrl);
    page = await context.newPage();
  }, 60_000);

  afterAll(async () => {
    await releaseBrowser(browser);
    await server?.stop();
  });

  it('creates the owner from the printed setup link', async () => {
    // The link exactly as the server printed it.
    const link = /(http:\/\/\S+\/setup\?token=\S+)/.exec(server.output())?.[1];
    expect(link).toBe(`${server.baseUrl}/setup?token=${server.setupToken}`);
    await page.goto(link!);
    await expect(page.getByRole('heading', { name: 'Create the owner account' }).isVisible()).resolves.toBe(true);

    await page.getByLabel('Your name').fill(owner.name);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password', { exact: true }).fill('too short');
    await page.getByLabel('Repeat the password').fill('too short');
    await page.getByRole('button', { name: 'Create owner' }).click();
    // The API's refusal, in words, next to the field it names.
    await expect(page.getByRole('alert').textContent()).resolves.toContain('at least 10 characters');
    await screenshot(page, 'setup-page');

    await page.getByLabel('Password', { exact: true }).fill(owner.password);
    await page.getByLabel('Repeat the password').fill(owner.password);
    await page.getByRole('button', { name: 'Create owner' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/');
    await expect(page.getByLabel('Workspace').inputValue()).resolves.toMatch(/^ws_/);
    await expect(page.getByRole('banner').textContent()).resolves.toContain(owner.name);

    // The session cookie the browser keeps: HttpOnly and SameSite=Lax; not Secure in development over http.
    const [cookie] = (await context.cookies()).filter((candidate) => candidate.name === 'plainbase_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false });
    await screenshot(page, 'home-after-setup');

    // The link worked once.
    const again = await fetch(`${server.baseUrl}/v1/auth/setup`).then((response) => response.json());
    expect(again).toEqual({ pending: false });
  });

  it('signs out and back in, and returns to the page asked for', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await context.cookies()).some((cookie) => cookie.name === 'plainbase_session')).toBe(false);

    // A signed-in page now sends the visitor to sign in, remembering where they were going.
    await page.goto('/members');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).searchParams.get('next')).toBe('/members');

    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('password is wrong');
    await screenshot(page, 'sign-in-page');

    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'People', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/members');
  });

  it('creates a workspace and switches between workspaces', async () => {
    await page.getByRole('link', { name: 'New workspace' }).click();
    await page.getByLabel('Workspace name').fill('Field research');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    const switcher = page.getByLabel('Workspace', { exact: true });
    await page.waitForFunction(() => document.querySelector('select')?.selectedOptions[0]?.textContent?.startsWith('Field research'));
    const options = await switcher.locator('option').allTextContents();
    expect(options.sort()).toEqual(['Field research (owner)', 'default (owner)']);

    // Every API call now names the selected workspace: its audit log shows its own creation.
    await page.getByRole('link', { name: 'Audit log' }).click();
    await expect(page.getByRole('table').textContent()).resolves.toContain('name: Field research');
    // The time is short and on one line, the full time on hover; the details are names and values.
    const when = page.getByRole('table').locator('tbody time').first();
    expect(await when.getAttribute('title')).toMatch(/\(\d{4}-\d{2}-\d{2}T[\d:.]+Z\)$/);
    expect(await when.evaluate((element) => element.getClientRects().length)).toBe(1);
    expect(await when.evaluate((element) => getComputedStyle(element.closest('th, td')!).whiteSpace)).toBe('nowrap');
    await expect(page.getByRole('table').locator('dl dt').allTextContents()).resolves.toContain('name:');
    await screenshot(page, 'audit-log');

    await switcher.selectOption({ label: 'default (owner)' });
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.waitForFunction(() => document.querySelector('table')?.textContent?.includes('name: default'));
    await expect(page.getByRole('table').textContent()).resolves.not.toContain('Field research');

    // The choice survives a reload.
    await page.reload();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await expect(switcher.locator('option:checked').textContent()).resolves.toBe('default (owner)');
  });

  it('folds the navigation behind a Menu button on a narrow screen', async () => {
    const narrow = await newPersonContext(browser, server.baseUrl, { narrow: true });
    await narrow.addCookies(await context.cookies());
    const phone = await narrow.newPage();
    await phone.goto('/members');
    await phone.getByRole('heading', { name: 'People', level: 1 }).waitFor();
    expect(await phone.getByRole('link', { name: 'Audit log' }).isVisible()).toBe(false);
    await phone.getByRole('button', { name: 'Menu' }).click();
    expect(await phone.getByRole('link', { name: 'Audit log' }).isVisible()).toBe(true);
    await screenshot(phone, 'narrow-menu');
    await narrow.close();
  });
});
