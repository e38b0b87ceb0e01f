import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDashboard, type Dashboard } from './support/dashboard.js';

/**
 * The invite page opened by someone signed out, with its two first requests answered in the
 * order that once left it at "Reading the invite…" for good: the session check (401, nobody
 * signed in) before the invite's preview. The page must show the invite whichever comes first;
 * the people tests meet this race only by chance.
 */
describe.skipIf(!inject('chromiumPresent'))('the invite page', () => {
  let d: Dashboard;
  let guest: BrowserContext;

  beforeAll(async () => {
    d = await startDashboard();
    guest = await d.newContext();
  }, 60_000);

  afterAll(async () => {
    await d?.stop();
  });

  it('shows the invite when the session check answers first', async () => {
    const created = await d.context.request.post('/v1/invites', {
      data: { email: 'late@example.com', role: 'editor' },
      headers: { 'x-baas-workspace': d.owner.workspaceId },
    });
    expect(created.status()).toBe(201);
    const { url } = (await created.json()) as { url: string };

    const page = await guest.newPage();
    d.explainFailure([page]);
    let sessionAnswered!: () => void;
    const answered = new Promise<void>((resolve) => (sessionAnswered = resolve));
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/v1/auth/session') sessionAnswered();
    });
    // The preview waits for the session check's answer, and a moment for the page to take it in.
    await page.route('**/v1/invites/*/accept', async (route) => {
      await answered;
      await new Promise((resolve) => setTimeout(resolve, 200));
      await route.continue().catch(() => undefined);
    });
    await page.goto(url);
    await page.getByText(`${d.owner.name} invited you to default as an editor.`).waitFor();
    await page.getByText('The invite is for late@example.com').waitFor();
    expect(await page.getByText('Reading the invite…').count()).toBe(0);
  });
});
