import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { seriousViolations } from './support/accessibility.js';
import { startDashboard, type Dashboard } from './support/dashboard.js';

/**
 * The records table at the size of a common laptop (1366 x 768) in a real browser against the
 * real service: it fits the window, hides a column and changes its page size, moves with the
 * keyboard, opens a record in a side panel with its history, edits a cell in place (a change
 * saved elsewhere meanwhile answers 412 and the cell says so) and trashes two selected rows. A
 * second workspace holds a collection of the same name: it is never changed.
 */
describe.skipIf(!inject('chromiumPresent'))('dashboard: the records table', () => {
  let d: Dashboard;
  let page: Page;
  let otherWorkspace = '';
  const LONG = `A long note that goes on and on ${'about many things '.repeat(12)}and ends here.`;

  /** The API with the owner's session, in a chosen workspace (the first by default). */
  async function call(method: 'GET' | 'POST' | 'PATCH', url: string, data?: unknown, workspace = d.owner.workspaceId): Promise<any> {
    const response = await d.context.request.fetch(url, { method, headers: { 'x-baas-workspace': workspace }, ...(data !== undefined ? { data } : {}) });
    expect(response.status(), `${method} ${url}: ${await response.text()}`).toBeLessThan(300);
    return response.json().catch(() => null);
  }

  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      email: { type: 'string' },
      company: { type: 'string' },
      notes: { type: 'string' },
      age: { type: 'integer', minimum: 0 },
      score: { type: 'number' },
      active: { type: 'boolean' },
      plan: { enum: ['free', 'pro'] },
      city: { type: 'string' },
      consent: { type: 'boolean' },
    },
  };
  const person = (index: number) => ({
    name: `Person ${String(index).padStart(2, '0')}`,
    email: `person.${index}@a-rather-long-domain-name.example.com`,
    company: `Company number ${index} with a long registered name`,
    notes: LONG,
    age: 20 + index,
    score: index / 3,
    active: index % 2 === 0,
    plan: index % 2 === 0 ? 'pro' : 'free',
    city: 'Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch',
    consent: true,
  });

  beforeAll(async () => {
    d = await startDashboard();
    page = d.page;
    await page.setViewportSize({ width: 1366, height: 768 });
    for (const workspace of [d.owner.workspaceId, (otherWorkspace = (await call('POST', '/v1/workspaces', { name: 'Second' })).id as string)]) {
      await call('POST', '/v1/collections', { name: 'crm' }, workspace);
      const version = await call('POST', '/v1/collections/crm/schemas', { schema }, workspace);
      await call('POST', `/v1/collections/crm/schemas/${version.version}/activate`, undefined, workspace);
    }
    await Promise.all(Array.from({ length: 30 }, (_, index) => call('POST', '/v1/collections/crm/records', { data: person(index) })));
    for (const index of [1, 2]) await call('POST', '/v1/collections/crm/records', { data: person(index) }, otherWorkspace);
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
  });

  const table = () => page.getByRole('table', { name: 'Records of crm' });
  const rows = () => table().locator('tbody tr');
  const panel = () => page.getByRole('complementary', { name: /^Record rec_/ });
  /** The record shown in the table's first row (newest first). */
  const firstRecordId = async () => (await rows().first().locator('th').innerText()).trim();
  const cellOf = (recordId: string, field: string) => rows().filter({ has: page.locator('th', { hasText: recordId }) }).locator(`td[data-column="data.${field}"]`);

  async function otherUntouched() {
    const other = await call('GET', '/v1/collections/crm/records?limit=50', undefined, otherWorkspace);
    expect(other.data.map((record: { data: { name: string } }) => record.data.name).sort()).toEqual(['Person 01', 'Person 02']);
    expect(other.data.filter((record: { createdAt: string; updatedAt: string }) => record.updatedAt !== record.createdAt)).toEqual([]);
  }

  it('fits a 1366 px window, hides a column with the chooser and changes the page size', async () => {
    d.explainFailure();
    await page.goto('/collections/crm/records');
    await shown(page.getByText('30 records; showing 30.'));
    // The page never scrolls sideways; the table scrolls inside its own box.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    // A cut cell holds its whole value on hover.
    expect(await rows().first().locator('td[data-column="data.notes"]').getAttribute('title')).toBe(LONG);
    await d.shot('records-table-1366');

    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('group', { name: 'Columns shown' }).getByLabel('notes').uncheck();
    await expect.poll(() => table().getByRole('columnheader', { name: 'notes' }).count()).toBe(0);
    // Remembered in this browser for this collection.
    await page.reload();
    await shown(page.getByText('30 records; showing 30.'));
    expect(await table().getByRole('columnheader', { name: 'notes' }).count()).toBe(0);
    expect(await table().getByRole('columnheader', { name: 'email' }).count()).toBe(1);

    await page.getByLabel('Rows per page').selectOption('25');
    await shown(page.getByText('30 records; showing 25.'));
    expect(await rows().count()).toBe(25);
    await shown(page.getByRole('button', { name: 'Load more' }));
    await page.getByLabel('Rows per page').selectOption('50');
    await shown(page.getByText('30 records; showing 30.'));
  });

  it('moves down with the arrow key, opens the record with Enter and closes it with Escape', async () => {
    d.explainFailure();
    const second = (await rows().nth(1).locator('th').innerText()).trim();
    await table().locator('[data-cell="0:0"]').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await shown(panel());
    expect(await panel().getByRole('heading', { level: 2 }).innerText()).toBe(`Record ${second}`);
    await containsText(panel().getByRole('region', { name: 'Fields' }), 'Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch');
    await containsText(panel().getByRole('region', { name: 'History' }), 'Revision 1: created');
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await d.shot('records-table-panel');
    // The open row is the current one for screen readers (aria-current: aria-selected is for grids,
    // and this is a plain table), and axe finds nothing serious with the panel open.
    expect(await rows().evaluateAll((all) => all.filter((row) => row.getAttribute('aria-current') === 'true').map((row) => row.querySelector('th')?.textContent?.trim()))).toEqual([second]);
    expect(await table().locator('[aria-selected]').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await panel().waitFor({ state: 'detached' });
    expect(await table().locator('tbody tr[aria-current]').count()).toBe(0);
    // The keyboard is back on the row's cell: Space selects the row, and again lets it go.
    const checkbox = table().getByLabel(`Select record ${second}`);
    await page.keyboard.press('Space');
    await expect.poll(() => checkbox.isChecked()).toBe(true);
    await containsText(page.getByRole('region', { name: 'Selection' }), '1 selected.');
    await page.keyboard.press('Space');
    await expect.poll(() => checkbox.isChecked()).toBe(false);
  });

  it('keeps the top bar usable while a record is open, at 1366 x 768, scrolled, and on a phone', async () => {
    d.explainFailure();
    const id = (await rows().nth(1).locator('th').innerText()).trim();
    await cellOf(id, 'city').click();
    await shown(panel());
    for (const size of [{ width: 1366, height: 768 }, { width: 390, height: 844 }]) {
      await page.setViewportSize(size);
      for (const scrollY of [0, 300]) {
        await page.evaluate((y) => window.scrollTo(0, y), scrollY);
        // The panel starts where the bar ends (or at the window's top once the bar has scrolled away).
        await expect.poll(() => panelTopAndBarBottom(page), { message: `${size.width}px, scrolled ${scrollY}px` }).toEqual(expect.objectContaining({ clear: true }));
        expect(await coveredTopbarControls(page), `${size.width}px, scrolled ${scrollY}px`).toEqual([]);
      }
      await page.evaluate(() => window.scrollTo(0, 0));
      // Playwright's own check that a click there reaches the button, without signing out.
      await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click({ trial: true, timeout: 5000 });
      await page.getByRole('banner').getByLabel('Workspace').click({ trial: true, timeout: 5000 });
      await d.shot(`records-table-panel-${size.width}`);
    }
    await page.setViewportSize({ width: 1366, height: 768 });
    await page.keyboard.press('Escape');
    await panel().waitFor({ state: 'detached' });
  });

  it("shows a change made elsewhere in the open record's history, without a reload, and one made while paused on resuming", async () => {
    d.explainFailure();
    const id = (await rows().nth(1).locator('th').innerText()).trim();
    await cellOf(id, 'city').click();
    await shown(panel());
    const history = panel().getByRole('region', { name: 'History' });
    await containsText(history, 'Revision 1: created');
    expect(await history.innerText()).not.toContain('Revision 2');
    // A mark that a reload of the page would wipe.
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    // Another client (an API call, not this tab) changes the record: the event stream tells the page.
    await call('PATCH', `/v1/collections/crm/records/${id}`, { data: { company: 'Changed by another client' } });
    await containsText(history, 'Revision 2: changed');
    await history.getByText('Revision 2: changed').click();
    await containsText(history.locator('details[open] pre'), 'Changed by another client');
    await containsText(panel().getByRole('region', { name: 'Fields' }), 'Changed by another client');
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

    // Paused, a change is not heard of; resuming brings the history up to date too.
    // By key, not by pointer: the toolbar's right end lies under the open panel, and the scroll that
    // brings the button into view moves the panel (it follows the top bar), so a click could land beside it.
    await page.getByRole('button', { name: 'Pause live updates' }).press('Enter');
    await call('PATCH', `/v1/collections/crm/records/${id}`, { data: { company: 'Changed while paused' } });
    await page.getByRole('button', { name: 'Resume live updates' }).press('Enter');
    await containsText(history, 'Revision 3: changed');
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    await page.keyboard.press('Escape');
    await panel().waitFor({ state: 'detached' });
  });

  it('edits a cell in place with an input of its type, refuses what the schema refuses, and the history shows the change', async () => {
    d.explainFailure();
    const id = await firstRecordId();
    await cellOf(id, 'active').dblclick();
    expect(await page.getByLabel(`active of record ${id}`, { exact: true }).getAttribute('type')).toBe('checkbox');
    await page.getByLabel(`active of record ${id}`, { exact: true }).press('Escape');

    await cellOf(id, 'age').dblclick();
    const age = page.getByLabel(`age of record ${id}`, { exact: true });
    expect(await age.getAttribute('type')).toBe('number');
    await expect.poll(() => age.isEnabled()).toBe(true);
    await age.fill('-5');
    await age.press('Enter');
    await containsText(cellOf(id, 'age').getByRole('alert'), 'must be >= 0');
    await d.shot('records-table-cell-error');
    await age.fill('77');
    await age.press('Enter');
    await shown(page.getByRole('status').filter({ hasText: `Saved age of record ${id}.` }));
    expect((await call('GET', `/v1/collections/crm/records/${id}`)).data.age).toBe(77);
    await containsText(cellOf(id, 'age'), '77');

    await cellOf(id, 'city').click();
    await shown(panel());
    await containsText(panel().getByRole('region', { name: 'History' }), 'Revision 2: changed');
    await page.keyboard.press('Escape');
    await panel().waitFor({ state: 'detached' });
  });

  it('never overwrites a change saved elsewhere while a cell is edited: 412, said in words, with a reload', async () => {
    d.explainFailure();
    const id = await firstRecordId();
    await cellOf(id, 'name').dblclick();
    const name = page.getByLabel(`name of record ${id}`, { exact: true });
    await expect.poll(() => name.isEnabled()).toBe(true);
    // Another client changes the record after the cell read it.
    await call('PATCH', `/v1/collections/crm/records/${id}`, { data: { name: 'Renamed elsewhere' } });
    await name.fill('Renamed here');
    await name.press('Enter');
    await containsText(cellOf(id, 'name').getByRole('alert'), 'Changed by someone else');
    expect((await call('GET', `/v1/collections/crm/records/${id}`)).data.name).toBe('Renamed elsewhere');
    await d.shot('records-table-cell-conflict');
    await cellOf(id, 'name').getByRole('button', { name: 'Reload' }).click();
    await expect.poll(() => name.inputValue()).toBe('Renamed elsewhere');
    await name.fill('Renamed here');
    await name.press('Enter');
    await shown(page.getByRole('status').filter({ hasText: `Saved name of record ${id}.` }));
    expect((await call('GET', `/v1/collections/crm/records/${id}`)).data.name).toBe('Renamed here');
  });

  it('trashes two selected rows together, and the other workspace is untouched', async () => {
    d.explainFailure();
    const picked = [(await rows().nth(0).locator('th').innerText()).trim(), (await rows().nth(1).locator('th').innerText()).trim()];
    for (const id of picked) await table().getByLabel(`Select record ${id}`).check();
    const changes = page.getByRole('region', { name: 'Changes to the selected records' });
    await changes.getByRole('button', { name: 'Trash the 2 records selected…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Move 2 records to the trash?' });
    await dialog.getByRole('button', { name: 'Trash 2 records' }).click();
    await shown(page.getByRole('status').filter({ hasText: '2 records moved to the trash.' }));
    await shown(page.getByText('28 records; showing 28.'));
    const trashed = await call('GET', '/v1/collections/crm/records?trashed=true');
    expect(trashed.data.map((record: { id: string }) => record.id).sort()).toEqual([...picked].sort());
    await otherUntouched();
  });

  it('selects every row shown, then all that match the filter, and sets a field on them through the counted change by filter', async () => {
    d.explainFailure();
    await page.goto(`/collections/crm/records?filter=${encodeURIComponent('data.consent = true')}`);
    await shown(page.getByText('28 records match the filter; showing 28.'));
    await page.getByLabel('Rows per page').selectOption('25');
    await shown(page.getByText('28 records match the filter; showing 25.'));
    await table().getByLabel('Select every row shown').check();
    const selection = page.getByRole('region', { name: 'Selection' });
    await containsText(selection, '25 selected.');
    await selection.getByRole('button', { name: 'Select all 28 that match the filter' }).click();
    await containsText(selection, 'All 28 records that match the filter are selected.');
    // One panel of changes by filter, in the selection: the dry run counts before anything is written.
    expect(await page.getByRole('region', { name: 'Changes by filter' }).count()).toBe(1);
    const changes = selection.getByRole('region', { name: 'Changes by filter' });
    await changes.getByRole('button', { name: 'Set a field on all that match…' }).click();
    await changes.getByLabel('Field', { exact: true }).fill('consent');
    await changes.getByLabel('New value').fill('false');
    await changes.getByRole('button', { name: 'Count and confirm…' }).click();
    await page.getByRole('dialog', { name: 'Set consent on 28 records?' }).getByRole('button', { name: 'Set on 28 records' }).click();
    await shown(page.getByRole('status').filter({ hasText: 'Set consent on 28 records.' }));
    expect((await call('GET', `/v1/collections/crm/records?filter=${encodeURIComponent('data.consent = false')}&count=true`)).total).toBe(28);
    await otherUntouched();
  });
});

/** Whether the open record's panel starts below the top bar's visible part, with both edges in pixels. */
async function panelTopAndBarBottom(page: Page): Promise<{ clear: boolean; panelTop: number; barBottom: number }> {
  return page.evaluate(() => {
    const panelTop = document.querySelector('.record-panel')!.getBoundingClientRect().top;
    const barBottom = Math.max(0, document.querySelector('.topbar')!.getBoundingClientRect().bottom);
    return { clear: panelTop >= barBottom - 1, panelTop, barBottom };
  });
}

/** The top bar's controls that something else covers: the element found at a control's centre is not that control. */
async function coveredTopbarControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('.topbar a, .topbar button, .topbar select')]
      .filter((control) => control.checkVisibility())
      .flatMap((control) => {
        const box = control.getBoundingClientRect();
        if (box.bottom <= 0) return [];
        const found = document.elementFromPoint(box.left + box.width / 2, Math.max(0, box.top) + (Math.min(box.bottom, window.innerHeight) - Math.max(0, box.top)) / 2);
        return found && (found === control || control.contains(found)) ? [] : [`${control.textContent?.trim() || control.tagName} is under ${found?.closest('[class]')?.className ?? 'nothing'}`];
      }),
  );
}

/** Waits until the element is there and visible (playwright-core has no expect of its own). */
async function shown(locator: Locator): Promise<void> {
  await locator.first().waitFor({ state: 'visible' });
}

async function containsText(locator: Locator, text: string): Promise<void> {
  await expect.poll(async () => locator.first().innerText(), { timeout: 10_000 }).toContain(text);
}
