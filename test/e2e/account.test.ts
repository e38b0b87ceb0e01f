import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDashboard, type Dashboard } from './support/dashboard.js';

/**
 * The person's own account in Chromium against the real service, started as a developer does:
 * PLAINBASE_ENV=development and no PLAINBASE_PUBLIC_URL. Both http://localhost:PORT and
 * http://127.0.0.1:PORT must work; the password is changed from the account page, which signs
 * the other browser out; sign-out that fails says so, and sign-out that works ends the session.
 */
describe.skipIf(!inject('chromiumPresent'))('dashboard: your account, sign-out, and localhost', () => {
  let d: Dashboard;
  let localhost: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    // An empty value is unset: the service calls itself http://127.0.0.1:PORT and judges origins by the Host.
    d = await startDashboard({ env: { PLAINBASE_PUBLIC_URL: '' } });
    localhost = d.baseUrl.replace('127.0.0.1', 'localhost');
  }, 60_000);
  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await d?.stop();
  });

  async function browserAt(base: string): Promise<Page> {
    const context = await d.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 860 } });
    context.setDefaultTimeout(10_000);
    contexts.push(context);
    return context.newPage();
  }

  async function signIn(page: Page, password: string): Promise<void> {
    await page.goto('/sign-in');
    await page.getByLabel('Email').fill(d.owner.email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  it('signs in at localhost and at 127.0.0.1 alike', async () => {
    for (const base of [localhost, d.baseUrl]) {
      const page = await browserAt(base);
      await signIn(page, d.owner.password);
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      expect(new URL(page.url()).origin).toBe(base);
      // A change works too, not only the sign-in: the service's own origin is the one in the address bar.
      await page.getByLabel('Name').fill(`from_${new URL(base).hostname.replace(/\W/g, '_')}`);
      await page.getByRole('button', { name: 'Create collection' }).click();
      await page.getByRole('heading', { name: /^from_\w+: records$/ }).waitFor();
    }
  });

  it('changes the password on the account page, refusing a wrong current one and a common new one; other browsers are signed out', async () => {
    const page = d.page;
    const elsewhere = await browserAt(localhost);
    await signIn(elsewhere, d.owner.password);
    await elsewhere.getByRole('navigation', { name: 'Main' }).waitFor();

    await page.goto('/');
    await page.getByRole('link', { name: d.owner.name }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    const fill = async (current: string, next: string) => {
      await page.getByLabel('Current password').fill(current);
      await page.getByLabel('New password', { exact: true }).fill(next);
      await page.getByLabel('New password again').fill(next);
      await page.getByRole('button', { name: 'Change password' }).click();
    };

    await fill('not my password', 'a brand new passphrase');
    await page.getByText('The current password is wrong.').waitFor();
    await fill(d.owner.password, 'password123');
    await page.getByText('This password is one of the most common passwords').waitFor();
    await fill(d.owner.password, '          ');
    await page.getByText('The password cannot be only spaces.').waitFor();
    await d.shot('account-password-refused');

    await fill(d.owner.password, 'a brand new passphrase');
    await page.getByRole('status').filter({ hasText: 'Your password is changed' }).waitFor();
    await d.shot('account-password-changed');
    // This browser goes on; the other one is out on its next request.
    await page.getByRole('link', { name: 'Collections' }).click();
    await page.getByRole('heading', { name: 'Collections' }).waitFor();
    await elsewhere.reload();
    await elsewhere.getByRole('heading', { name: 'Sign in' }).waitFor();
    await signIn(elsewhere, d.owner.password);
    await elsewhere.getByRole('alert').filter({ hasText: 'The email or the password is wrong.' }).waitFor();
    await signIn(elsewhere, 'a brand new passphrase');
    await elsewhere.getByRole('navigation', { name: 'Main' }).waitFor();
  });

  it('says so when sign-out fails and stays signed in; then signs out for real, ending the session on the server', async () => {
    const page = d.page;
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    const [cookie] = (await d.context.cookies()).filter((candidate) => candidate.name === 'plainbase_session');

    await page.route('**/v1/auth/sign-out', (route) => route.abort('connectionrefused'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('alert').filter({ hasText: 'Sign-out failed: you are still signed in.' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(true);
    await d.shot('sign-out-failed');
    await page.unroute('**/v1/auth/sign-out');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await d.context.cookies()).some((candidate) => candidate.name === 'plainbase_session')).toBe(false);
    const stale = await fetch(`${d.baseUrl}/v1/auth/session`, { headers: { cookie: `plainbase_session=${cookie!.value}` } });
    expect(stale.status).toBe(401);
  });
});
