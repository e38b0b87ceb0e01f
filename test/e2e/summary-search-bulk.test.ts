import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { startDashboard, type Dashboard } from './support/dashboard.js';

/**
 * A collection's Summary tab (records per day, records per value of a field), the search box of
 * the records table with its indexing progress, and the changes by filter (trash all that match,
 * set a field on all that match, each counted by a dry run before the confirm), in a real browser
 * against the real service. A second workspace holds a collection of the same name: it is never
 * counted, found or changed.
 */
describe.skipIf(!inject('chromiumPresent'))('dashboard: summary, search and changes by filter', () => {
  let d: Dashboard;
  let page: Page;
  let otherWorkspace = '';

  /** The API with the owner's session, in a chosen workspace (the first by default). */
  async function call(method: 'GET' | 'POST' | 'PATCH', url: string, data?: unknown, workspace = d.owner.workspaceId): Promise<any> {
    const response = await d.context.request.fetch(url, { method, headers: { 'x-baas-workspace': workspace }, ...(data !== undefined ? { data } : {}) });
    expect(response.status(), `${method} ${url}: ${await response.text()}`).toBeLessThan(300);
    return response.json().catch(() => null);
  }

  const PEOPLE = [
    { name: 'Ada Lovelace', plan: 'pro', note: 'analytical engine notes' },
    { name: 'Grace Hopper', plan: 'pro', note: 'compiler and cobol' },
    { name: 'Linus Torvalds', plan: 'free', note: 'kernel mailing list' },
    { name: 'Alan Turing', plan: 'trial', note: 'engine of computation' },
    { name: 'Edsger Dijkstra', plan: 'free', note: 'shortest paths' },
  ];

  beforeAll(async () => {
    d = await startDashboard();
    page = d.page;
    await call('POST', '/v1/collections', { name: 'people' });
    for (const data of PEOPLE) await call('POST', '/v1/collections/people/records', { data });
    // The same collection name in a second workspace, with records the first must never count or change.
    otherWorkspace = (await call('POST', '/v1/workspaces', { name: 'Second' })).id as string;
    await call('POST', '/v1/collections', { name: 'people' }, otherWorkspace);
    for (const plan of ['pro', 'pro', 'pro', 'free']) await call('POST', '/v1/collections/people/records', { data: { name: `Other ${plan}`, plan, note: 'engine' } }, otherWorkspace);
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
  });

  const tabs = () => page.getByRole('navigation', { name: 'Collection people' });
  const namesShown = async () =>
    (await page.getByRole('table', { name: 'Records of people' }).locator('tbody tr').allInnerTexts()).map((row) => PEOPLE.find((person) => row.includes(person.name))?.name ?? row).sort();
  async function otherUntouched() {
    const other = await call('GET', '/v1/collections/people/records?limit=50', undefined, otherWorkspace);
    expect(other.data.map((record: { data: unknown }) => record.data)).toEqual(
      expect.arrayContaining(['pro', 'pro', 'pro', 'free'].map((plan) => ({ name: `Other ${plan}`, plan, note: 'engine' }))),
    );
    expect(other.data).toHaveLength(4);
    // Never changed since made.
    expect(other.data.filter((record: { createdAt: string; updatedAt: string }) => record.updatedAt !== record.createdAt)).toEqual([]);
  }

  it('shows records per day for the last 30 days and records per value of a chosen field', async () => {
    d.explainFailure();
    await page.goto('/collections/people');
    await tabs().getByRole('link', { name: 'Summary' }).click();
    await page.getByRole('heading', { name: 'people: summary' }).waitFor();
    const chart = page.getByRole('region', { name: 'Records added per day' });
    await containsText(chart, '5 records added in the last 30 days');
    const bars = chart.locator('svg g');
    expect(await bars.count()).toBe(30);
    // Every record was made today: the last bar holds them all, the 29 before it none.
    const counts = await bars.evaluateAll((groups) => groups.map((group) => Number(group.getAttribute('data-count'))));
    expect(counts.slice(0, 29).every((count) => count === 0)).toBe(true);
    expect(counts[29]).toBe(5);

    const perValue = page.getByRole('region', { name: 'Records per value' });
    await perValue.getByLabel('Field').selectOption('plan');
    const table = perValue.getByRole('table', { name: 'Records per value of data.plan' });
    await expect.poll(() => table.locator('tbody tr').allInnerTexts()).toEqual(['free\t2', 'pro\t2', 'trial\t1']);
    await perValue.getByLabel('Field').selectOption('name');
    await expect.poll(() => perValue.getByRole('table', { name: 'Records per value of data.name' }).locator('tbody tr').count()).toBe(5);
    await d.shot('summary-tab');
  });

  it('searches the records once the collection has search fields, showing the index build meanwhile', async () => {
    d.explainFailure();
    await page.goto('/collections/people/records');
    await shown(page.getByText('5 records; showing 5.'));
    expect(await page.getByRole('search', { name: 'Search records' }).count()).toBe(0);

    // A real build of five records ends before a browser can look at it: while `building` is set,
    // the collection's real answer is passed on with a build in progress, as the API words it.
    let building = true;
    await page.route(
      (url) => url.pathname === '/v1/collections/people',
      async (route) => {
        const response = await route.fetch();
        const body = await response.json();
        if (building && route.request().method() === 'GET') body.search = { state: 'building', indexed: 1234, total: 5000 };
        await route.fulfill({ response, json: body });
      },
    );
    await call('PATCH', '/v1/collections/people', { settings: { searchFields: ['data.name', 'data.note'] } });
    await page.goto(`/collections/people/records?search=engine`);
    await containsText(page.getByRole('status').filter({ hasText: 'Indexing' }), 'Indexing: 1,234 of 5,000. The search runs when the index is ready.');
    expect(await page.getByRole('search', { name: 'Search records' }).getByLabel('Search').inputValue()).toBe('engine');
    await d.shot('records-search-indexing');

    // Built: the page reads the collection again by itself and runs the search.
    building = false;
    await shown(page.getByText('2 records match the search; showing 2.'));
    expect(await page.getByText(/^Indexing/).count()).toBe(0);
    expect(await namesShown()).toEqual(['Ada Lovelace', 'Alan Turing']);
    // Best match first: no column is marked as the order.
    expect(await page.getByRole('columnheader', { name: 'createdAt' }).getAttribute('aria-sort')).toBe('none');
    await page.unroute((url) => url.pathname === '/v1/collections/people');
    await d.shot('records-search');

    const box = page.getByRole('search', { name: 'Search records' });
    await box.getByLabel('Search').fill('tur*');
    await box.getByRole('button', { name: 'Search', exact: true }).click();
    await shown(page.getByText('1 record matches the search; showing 1.'));
    expect(await namesShown()).toEqual(['Alan Turing']);
    expect(new URL(page.url()).searchParams.get('search')).toBe('tur*');

    await box.getByLabel('Search').fill('nowhere');
    await box.getByRole('button', { name: 'Search', exact: true }).click();
    await shown(page.getByText('No record matches the search.'));

    await box.getByRole('button', { name: 'Clear search' }).click();
    await shown(page.getByText('5 records; showing 5.'));
    await otherUntouched();
  });

  it('sets a field on all that match the filter, the dry run counted first', async () => {
    d.explainFailure();
    await page.goto(`/collections/people/records?filter=${encodeURIComponent('data.plan = "free"')}`);
    await shown(page.getByText('2 records match the filter; showing 2.'));
    const changes = page.getByRole('region', { name: 'Changes by filter' });
    await changes.getByRole('button', { name: 'Set a field on all that match…' }).click();
    await changes.getByLabel('Field', { exact: true }).fill('plan');
    await changes.getByLabel('New value').fill('paid');
    await changes.getByRole('button', { name: 'Count and confirm…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Set plan on 2 records?' });
    await containsText(dialog, '2 records match data.plan = "free"; 2 records would change.');
    // The count came from a dry run: nothing is written before the confirm.
    expect((await call('GET', `/v1/collections/people/records?filter=${encodeURIComponent('data.plan = "free"')}&count=true`)).total).toBe(2);
    await d.shot('records-bulk-set-confirm');
    await dialog.getByRole('button', { name: 'Set on 2 records' }).click();
    await hasText(page.getByRole('status').filter({ hasText: 'Set plan' }), 'Set plan on 2 records.');
    await shown(page.getByText('No record matches the filter.'));
    const paid = await call('GET', `/v1/collections/people/records?filter=${encodeURIComponent('data.plan = "paid"')}`);
    expect(paid.data.map((record: { data: { name: string } }) => record.data.name).sort()).toEqual(['Edsger Dijkstra', 'Linus Torvalds']);
    expect((await call('GET', `/v1/collections/people/records?filter=${encodeURIComponent('data.plan = "pro"')}&count=true`)).total).toBe(2);
    await otherUntouched();
  });

  it('trashes all that match the filter after the dry-run count, and a cancel changes nothing', async () => {
    d.explainFailure();
    await page.goto(`/collections/people/records?filter=${encodeURIComponent('data.plan = "pro"')}`);
    await shown(page.getByText('2 records match the filter; showing 2.'));
    const changes = page.getByRole('region', { name: 'Changes by filter' });
    await changes.getByRole('button', { name: 'Trash all that match the filter…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Move 2 records to the trash?' });
    await containsText(dialog, '2 records match data.plan = "pro".');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await call('GET', '/v1/collections/people/records?count=true')).total).toBe(5);

    await changes.getByRole('button', { name: 'Trash all that match the filter…' }).click();
    await dialog.getByRole('button', { name: 'Trash 2 records' }).click();
    await hasText(page.getByRole('status').filter({ hasText: 'trash' }), '2 records moved to the trash.');
    await shown(page.getByText('No record matches the filter.'));
    const live = await call('GET', '/v1/collections/people/records');
    expect(live.data.map((record: { data: { name: string } }) => record.data.name).sort()).toEqual(['Alan Turing', 'Edsger Dijkstra', 'Linus Torvalds']);
    const trashed = await call('GET', '/v1/collections/people/records?trashed=true');
    expect(trashed.data.map((record: { data: { name: string } }) => record.data.name).sort()).toEqual(['Ada Lovelace', 'Grace Hopper']);
    await otherUntouched();

    // Without a filter there is nothing to change by filter: the buttons are not offered.
    await page.getByRole('search', { name: 'Filter records' }).getByRole('button', { name: 'Clear' }).click();
    await shown(page.getByText('3 records; showing 3.'));
    expect(await page.getByRole('region', { name: 'Changes by filter' }).count()).toBe(0);
  });

  it('refuses a field the API refuses, in words, with nothing asked and nothing changed', async () => {
    d.explainFailure();
    await page.goto(`/collections/people/records?filter=${encodeURIComponent('data.plan = "trial"')}`);
    await shown(page.getByText('1 record matches the filter; showing 1.'));
    const changes = page.getByRole('region', { name: 'Changes by filter' });
    await changes.getByRole('button', { name: 'Set a field on all that match…' }).click();
    await changes.getByLabel('Field', { exact: true }).fill('__proto__');
    await changes.getByLabel('New value').fill('{"admin": true}');
    const answer = page.waitForResponse((response) => response.url().endsWith('/records/bulk-update'));
    await changes.getByRole('button', { name: 'Count and confirm…' }).click();
    expect((await answer).status()).toBe(400);
    await shown(changes.getByRole('alert'));
    expect(await page.getByRole('dialog').count()).toBe(0);
    const alan = await call('GET', `/v1/collections/people/records?filter=${encodeURIComponent('data.plan = "trial"')}`);
    expect(alan.data[0].data).toEqual(PEOPLE[3]);
  });

  it('shows a viewer the summary and the search, and no changes by filter', async () => {
    d.explainFailure();
    const invite = await call('POST', '/v1/invites', { email: 'vera@example.com', role: 'viewer' });
    const context = await d.newContext();
    const accepted = await context.request.post(`/v1/invites/${invite.token}/accept`, { data: { name: 'Vera Viewer', password: 'viewer password 1' } });
    expect(accepted.status()).toBe(200);
    const viewer = await context.newPage();
    await viewer.goto('/collections/people/summary');
    await containsText(viewer.getByRole('region', { name: 'Records added per day' }), '3 records added in the last 30 days');
    await viewer.goto(`/collections/people/records?filter=${encodeURIComponent('data.plan = "paid"')}&search=kernel`);
    await viewer.getByText('1 record matches the search and the filter; showing 1.').waitFor();
    expect(await viewer.getByRole('region', { name: 'Changes by filter' }).count()).toBe(0);
    expect(await viewer.getByRole('button', { name: /all that match/ }).count()).toBe(0);
    await context.close();
  });
});

async function shown(locator: Locator): Promise<void> {
  await locator.first().waitFor({ state: 'visible' });
}

async function hasText(locator: Locator, text: string): Promise<void> {
  await expect.poll(async () => (await locator.first().innerText()).trim(), { timeout: 10_000 }).toBe(text);
}

async function containsText(locator: Locator, text: string): Promise<void> {
  await expect.poll(async () => locator.first().innerText(), { timeout: 10_000 }).toContain(text);
}
