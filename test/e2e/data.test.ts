import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { seriousViolations } from './support/accessibility.js';
import { startDashboard, type Dashboard } from './support/dashboard.js';
import { layoutProblems } from './support/layout-check.js';

/**
 * The data pages in a real browser against the real service: a collection, a schema version,
 * records made, filtered, sorted, edited (with the schema's error beside the field), trashed and
 * restored, an import with one bad line, an export, and the trash of collections.
 */
describe.skipIf(!inject('chromiumPresent'))('dashboard: data', () => {
  let d: Dashboard;
  let page: Page;
  /** Every answer of 400 or more to the owner's page, API calls aside (those are tested on their own). */
  const failedLoads: string[] = [];

  beforeAll(async () => {
    d = await startDashboard();
    page = d.page;
    page.on('response', (response) => {
      if (response.status() >= 400 && !new URL(response.url()).pathname.startsWith('/v1/')) failedLoads.push(`${response.status()} ${response.url()}`);
    });
    // Loaded again with the listener on, so the first page's own files (the favicon too) are seen.
    await page.reload();
  }, 30_000);
  afterAll(async () => {
    await d?.stop();
  });

  const rowOf = (text: string) => page.getByRole('row').filter({ hasText: text });
  const recordPanel = () => page.getByRole('complementary', { name: /^Record rec_/ });
  /** Opens the record of the row that says `text` in the side panel, by clicking its id. */
  async function openRecord(text: string): Promise<Locator> {
    const id = (await rowOf(text).locator('th').first().innerText()).trim();
    await rowOf(text).locator('th').first().click();
    const panel = page.getByRole('complementary', { name: `Record ${id}` });
    await panel.waitFor();
    return panel;
  }
  const firstDataCells = async (column: number) =>
    page.getByRole('table', { name: /Records of/ }).locator('tbody tr').evaluateAll((rows, index) => rows.map((row) => row.children[index]?.textContent ?? ''), column);

  it('creates a collection, refusing a bad name first', async () => {
    await page.getByRole('heading', { name: 'Collections' }).waitFor();
    await page.getByLabel('Name').fill('Bad-Name');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await shown(page.getByText('Lower-case letters, digits and _, starting with a letter; at most 63 characters.').first());
    await page.getByLabel('Name').fill('leads');
    await page.getByLabel('Description (optional)').fill('People who asked for a demo');
    await page.getByRole('button', { name: 'Create collection' }).click();
    // Created, the dashboard opens the new collection's records; the list then shows it, with its count.
    await page.getByRole('heading', { name: 'leads: records' }).waitFor();
    await page.getByRole('link', { name: 'Collections', exact: true }).first().click();
    await shown(rowOf('People who asked for a demo').getByRole('link', { name: 'leads' }));
    expect(await rowOf('People who asked for a demo').getByRole('cell').first().textContent()).toBe('0');
    await d.shot('data-collections');
  });

  it('creates and activates a schema version', async () => {
    await page.getByRole('link', { name: 'leads' }).click();
    await page.getByRole('navigation', { name: 'Collection leads' }).getByRole('link', { name: 'Schema versions' }).click();
    await page.getByRole('button', { name: 'New schema version' }).click();
    const schema = {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1 }, age: { type: 'integer', minimum: 0 }, status: { type: 'string' } },
      required: ['name'],
    };
    await page.getByRole('tab', { name: 'JSON' }).click();
    await page.getByLabel('Schema (JSON Schema 2020-12)').fill(JSON.stringify(schema, null, 2));
    await page.getByRole('button', { name: 'Create and activate' }).click();
    // One notice, not two near-identical ones: the line naming the active version is the status.
    await hasText(page.getByRole('status'), 'Version 1 is active: every new or changed record must match it.');
    expect(await page.getByRole('status').count()).toBe(1);
    expect(await page.getByText(/Version 1 is (created and )?active/).count()).toBe(1);
    await shown(page.getByRole('listitem').filter({ hasText: 'Version 1' }).getByText('active: enforced'));
    await d.shot('data-schema-versions');
  });

  it('adds records with the form the schema makes and as JSON, filters them and sorts by a column', async () => {
    await page.getByRole('navigation', { name: 'Collection leads' }).getByRole('link', { name: 'Records' }).click();
    // The first through the form generated from the active schema: typed inputs, checked in the
    // browser before anything is sent, each problem under its field.
    await page.getByRole('button', { name: 'New record' }).click();
    expect(await page.getByRole('button', { name: 'Form', exact: true }).getAttribute('aria-pressed')).toBe('true');
    const form = page.locator('.record-form');
    expect(await form.getByLabel('age', { exact: true }).getAttribute('type')).toBe('number');
    await form.getByLabel('age', { exact: true }).fill('-1');
    await page.getByRole('button', { name: 'Create record' }).click();
    await containsText(form, 'name is required');
    await containsText(form, 'age must be >= 0');
    expect(await form.getByLabel('age', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await d.shot('data-record-form-errors');
    await form.getByLabel('name', { exact: true }).fill('Ada');
    await form.getByLabel('age', { exact: true }).fill('36');
    await form.getByLabel('status', { exact: true }).fill('open');
    await page.getByRole('button', { name: 'Create record' }).click();
    await shown(page.getByRole('status').filter({ hasText: 'Created record rec_' }));
    await shown(rowOf('Ada'));
    const ada = (await (await page.request.get('/v1/collections/leads/records?filter=data.name%20%3D%20%22Ada%22', { headers: { 'x-baas-workspace': d.owner.workspaceId } })).json()) as { data: { data: unknown }[] };
    expect(ada.data[0]!.data).toEqual({ name: 'Ada', age: 36, status: 'open' });

    // The raw JSON editor is one click away.
    for (const data of [{ name: 'Grace', age: 45, status: 'closed' }, { name: 'Linus', age: 12, status: 'open' }]) {
      await page.getByRole('button', { name: 'New record' }).click();
      await page.getByRole('button', { name: 'JSON', exact: true }).click();
      await page.getByLabel('Data (JSON)').fill(JSON.stringify(data, null, 2));
      await page.getByRole('button', { name: 'Create record' }).click();
      await shown(page.getByRole('status').filter({ hasText: 'Created record rec_' }));
      await shown(rowOf(data.name));
    }
    await shown(page.getByText('3 records; showing 3.'));

    // The filter hint names the collection's own fields (its active schema's), not an example's.
    const hint = page.getByRole('search').locator('.hint');
    await containsText(hint, 'data.age');
    expect(await hint.innerText()).toContain('data.status');

    await page.getByLabel('Filter', { exact: true }).fill('data.status = "open"');
    await page.getByRole('button', { name: 'Apply' }).click();
    await shown(page.getByText('2 records match the filter; showing 2.'));
    expect(new URL(page.url()).searchParams.get('filter')).toBe('data.status = "open"');
    // Polled: live updates (the records just made) may bring the page again meanwhile.
    // Newest first when no order is chosen.
    await expect.poll(() => firstDataCells(2)).toEqual(['Linus', 'Ada']);
    await expect.poll(() => page.getByRole('columnheader', { name: 'createdAt' }).getAttribute('aria-sort')).toBe('descending');

    // A broken filter: the API's own words, and where it went wrong.
    await page.getByLabel('Filter', { exact: true }).fill('data.age >= ');
    await page.getByRole('button', { name: 'Apply' }).click();
    await containsText(page.getByRole('search').getByRole('alert'), 'Invalid filter at position');
    await d.shot('data-records-bad-filter');

    await page.getByRole('button', { name: 'Clear' }).click();
    await shown(page.getByText('3 records; showing 3.'));
    await page.getByRole('columnheader', { name: 'age' }).getByRole('button').click();
    await expect.poll(() => page.getByRole('columnheader', { name: 'age' }).getAttribute('aria-sort')).toBe('ascending');
    expect(new URL(page.url()).searchParams.get('sort')).toBe('data.age');
    await expect.poll(() => firstDataCells(2)).toEqual(['Linus', 'Ada', 'Grace']);
    await page.getByRole('columnheader', { name: 'age' }).getByRole('button').click();
    await expect.poll(() => page.getByRole('columnheader', { name: 'age' }).getAttribute('aria-sort')).toBe('descending');
    expect(new URL(page.url()).searchParams.get('sort')).toBe('-data.age');
    await expect.poll(() => firstDataCells(2)).toEqual(['Grace', 'Ada', 'Linus']);
    await d.shot('data-records');
  });

  it("shows the schema's error beside the field when an edit breaks it, then saves the fix", async () => {
    // The row's actions are in the side panel the row opens, and the editor opens there, by the record.
    await (await openRecord('Ada')).getByRole('button', { name: /^Edit record/ }).click();
    await page.getByRole('button', { name: 'JSON', exact: true }).click();
    const editor = page.getByLabel('Data (JSON)');
    await editor.fill('{\n  "name": "Ada",\n  "age": -1,\n  "status": "open"\n}\n');
    await page.getByRole('button', { name: 'Save record' }).click();
    // The problem is listed for screen readers and written on the line of "age" (line 3), beside it.
    await containsText(page.getByRole('alert').filter({ hasText: 'data.age' }), 'data.age (line 3): must be >= 0');
    const beside = page.getByTestId('field-errors-beside');
    await hasText(beside.locator('[data-line="3"]'), 'age must be >= 0');
    await hasText(beside.locator('[data-line="2"]'), '');
    await expect.poll(() => editor.getAttribute('aria-invalid')).toBe('true');
    await d.shot('data-record-schema-error');

    await editor.fill('{\n  "name": "Ada",\n  "age": 37,\n  "status": "open"\n}\n');
    await page.getByRole('button', { name: 'Save record' }).click();
    await shown(page.getByRole('status').filter({ hasText: 'Saved record' }));
    await containsText(rowOf('Ada'), '37');
    // The panel shows the record as saved, and its history the change.
    await containsText(recordPanel().getByRole('region', { name: 'History' }), 'Revision 2: replaced');
    await page.keyboard.press('Escape');
    await recordPanel().waitFor({ state: 'detached' });
  });

  it('moves a record to the trash and restores it', async () => {
    // A quiet button in the record's panel; red only for the answer in the question it opens.
    const trashButton = (await openRecord('Linus')).getByRole('button', { name: /^Move to trash: record / });
    expect(await backgroundOf(trashButton)).not.toBe(DANGER_RED);
    await trashButton.click();
    const dialog = page.getByRole('dialog', { name: 'Move this record to the trash?' });
    await containsText(dialog, '"name":"Linus"');
    expect(await backgroundOf(dialog.getByRole('button', { name: 'Move to trash' }))).toBe(DANGER_RED);
    await dialog.getByRole('button', { name: 'Move to trash' }).click();
    await rowOf('Linus').waitFor({ state: 'detached' });
    await recordPanel().waitFor({ state: 'detached' });
    await shown(page.getByText('2 records; showing 2.'));

    await page.getByRole('button', { name: 'Show trashed records' }).click();
    expect(new URL(page.url()).searchParams.get('trashed')).toBe('true');
    await shown(rowOf('Linus'));
    const trashed = await openRecord('Linus');
    // The owner may also delete for good (records:purge); editors would not see it.
    await shown(trashed.getByRole('button', { name: /for good$/ }));
    await d.shot('data-records-trash');
    await trashed.getByRole('button', { name: /^Restore record/ }).click();
    await shown(page.getByRole('status').filter({ hasText: 'is back' }));
    await page.getByRole('button', { name: 'Back to records' }).click();
    await shown(rowOf('Linus'));
    await shown(page.getByText('3 records; showing 3.'));
  });

  it('shows records added, changed and trashed elsewhere as they happen, and stops while paused', async () => {
    // Another client of the API: the same person's session in a request of its own, not this page.
    const elsewhere = async (method: 'POST' | 'PATCH' | 'DELETE', url: string, data?: unknown) => {
      const response = await d.context.request.fetch(url, { method, data, headers: { 'x-baas-workspace': d.owner.workspaceId } });
      expect(response.status(), await response.text()).toBeLessThan(300);
      return (await response.json().catch(() => null)) as any;
    };
    const margaret = await elsewhere('POST', '/v1/collections/leads/records', { data: { name: 'Margaret', age: 33, status: 'open' } });
    await shown(rowOf('Margaret'));
    await shown(page.getByText(`Record ${margaret.id} was added.`));
    await elsewhere('PATCH', `/v1/collections/leads/records/${margaret.id}`, { data: { status: 'met' } });
    await shown(rowOf('Margaret').filter({ hasText: 'met' }));
    expect(await rowOf('Margaret').getAttribute('class')).toContain('row-changed');
    await d.shot('data-records-live');
    await elsewhere('DELETE', `/v1/collections/leads/records/${margaret.id}`);
    await rowOf('Margaret').waitFor({ state: 'detached' });
    // Gone for good, so the tests after this one find the collection as they left it.
    await elsewhere('DELETE', `/v1/collections/leads/records/${margaret.id}?permanent=true`);

    await page.getByRole('button', { name: 'Pause live updates' }).click();
    await shown(page.getByText('Live updates are paused'));
    await elsewhere('POST', '/v1/collections/leads/records', { data: { name: 'Katherine', age: 41, status: 'open' } });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await rowOf('Katherine').count()).toBe(0);
    await page.getByRole('button', { name: 'Resume live updates' }).click();
    await shown(rowOf('Katherine'));
    const katherine = (await rowOf('Katherine').locator('th').first().innerText()).trim();
    expect(katherine).toMatch(/^rec_/);
    await elsewhere('DELETE', `/v1/collections/leads/records/${katherine}`);
    await rowOf('Katherine').waitFor({ state: 'detached' });
    await elsewhere('DELETE', `/v1/collections/leads/records/${katherine}?permanent=true`);
  });

  it('imports a file with one bad line and reports it; exports what is there', async () => {
    await page.getByRole('button', { name: 'Import…' }).click();
    const lines = ['{"name": "Barbara", "age": 29, "status": "open"}', '{"name": "Bad", "age": -5}', '{"name": "Edsger", "age": 72, "status": "closed"}'];
    await page.getByLabel('File (NDJSON, JSON array or CSV)').setInputFiles({ name: 'more.ndjson', mimeType: 'application/x-ndjson', buffer: Buffer.from(`${lines.join('\n')}\n`) });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    const report = page.getByRole('region', { name: 'Import report' });
    await hasText(report.getByRole('status'), 'Imported 2 records; 1 line was refused.');
    const refused = report.getByRole('row').filter({ hasText: 'must be >= 0' });
    await hasText(refused.getByRole('rowheader'), '2');
    await containsText(refused, 'data.age must be >= 0');
    await shown(page.getByText('5 records; showing 5.'));
    await d.shot('data-import-report');
    // All or nothing: the bad line stops the import, the message names it, and nothing is kept.
    await page.getByLabel('File (NDJSON, JSON array or CSV)').setInputFiles({ name: 'again.ndjson', mimeType: 'application/x-ndjson', buffer: Buffer.from(`${lines.join('\n')}\n`) });
    expect(await report.count()).toBe(0);
    await page.getByRole('radio', { name: 'All or nothing: stop and keep nothing' }).check();
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await containsText(page.getByRole('alert'), 'Nothing was imported. Fix line 2');
    expect(await report.count()).toBe(0);
    const kept = await page.request.get('/v1/collections/leads/records?limit=50', { headers: { 'x-baas-workspace': d.owner.workspaceId } });
    expect(((await kept.json()) as { data: unknown[] }).data).toHaveLength(5);

    await page.getByRole('button', { name: 'Export…' }).click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download NDJSON' }).click()]);
    expect(download.suggestedFilename()).toBe('leads.ndjson');
    await containsText(page.getByRole('form', { name: 'Export' }).getByRole('status'), 'Saved leads.ndjson');
    const exported = await streamText(await download.createReadStream());
    expect(exported.trim().split('\n').map((line) => JSON.parse(line).data.name).sort()).toEqual(['Ada', 'Barbara', 'Edsger', 'Grace', 'Linus']);
  });

  it('indexes a field: a bad name is refused beside its input, the index is listed, then deleted after asking', async () => {
    await page.getByRole('navigation', { name: 'Collection leads' }).getByRole('link', { name: 'Indexes' }).click();
    await shown(page.getByText('No indexes yet.'));
    const form = page.getByRole('form', { name: 'New index' });
    await form.getByLabel('Index name').fill('Bad Name');
    await form.getByLabel('Fields').fill('data.status');
    await form.getByRole('button', { name: 'Create index' }).click();
    await shown(form.getByRole('alert'));
    expect(await form.getByLabel('Index name').getAttribute('aria-invalid')).toBe('true');

    await form.getByLabel('Index name').fill('by_status');
    await form.getByRole('button', { name: 'Create index' }).click();
    await hasText(form.getByRole('status'), 'Index by_status is ready.');
    expect(await form.getByRole('alert').count()).toBe(0);
    const row = page.getByRole('table', { name: 'Indexes of leads' }).getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'by_status' }) });
    expect(await row.getByRole('cell').allInnerTexts()).toEqual(['data.status', 'no', 'Delete']);
    expect(await seriousViolations(page)).toEqual([]);
    await d.shot('data-indexes');
    // On a phone too: nothing sticks out of the window or covers something else.
    const wide = page.viewportSize();
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await layoutProblems(page)).toEqual([]);
    await d.shot('data-indexes-phone');
    if (wide) await page.setViewportSize(wide);

    // A button in a table cell works from the keyboard too.
    await row.getByRole('button', { name: 'Delete index by_status' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'Delete index by_status?' }).getByRole('button', { name: 'Delete index' }).click();
    await hasText(page.getByRole('status'), 'Index by_status is removed.');
    await shown(page.getByText('No indexes yet.'));
    expect(await form.getByRole('status').count()).toBe(0);
  });

  it('uploads a file with progress, attaches it to a record and downloads it', async () => {
    await page.getByRole('navigation', { name: 'Collection leads' }).getByRole('link', { name: 'Files' }).click();
    await shown(page.getByText('No files yet.'));
    const content = `badge photo\n${'x'.repeat(200_000)}\n`;
    await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'badge.txt', mimeType: 'text/plain', buffer: Buffer.from(content) });
    // A slow uplink, so the progress bar is there to be seen.
    const cdp = await d.context.newCDPSession(page);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 100 * 1024 });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    const bar = page.getByRole('progressbar', { name: /Uploading badge.txt/ });
    await shown(bar);
    await d.shot('data-files-uploading');
    await hasText(page.getByRole('status'), 'Uploaded badge.txt (195 KiB).');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await cdp.detach();
    const row = rowOf('badge.txt');
    await containsText(row, '0 records');

    await row.getByRole('button', { name: 'Attach badge.txt to a record' }).click();
    const ada = await page.request.get(`/v1/collections/leads/records?filter=${encodeURIComponent('data.name = "Ada"')}`, { headers: { 'x-baas-workspace': d.owner.workspaceId } });
    const adaId = ((await ada.json()) as { data: { id: string }[] }).data[0]!.id;
    // The record is picked from the collection's records, found by its text.
    await page.getByLabel('Find a record').fill('Ada');
    await page.getByRole('radio', { name: new RegExp(adaId) }).check();
    await page.getByRole('button', { name: 'Attach', exact: true }).click();
    await hasText(page.getByRole('status'), `badge.txt is attached to record ${adaId}.`);
    await containsText(rowOf('badge.txt'), '1 record');
    await d.shot('data-files');

    const [download] = await Promise.all([page.waitForEvent('download'), rowOf('badge.txt').getByRole('button', { name: 'Download badge.txt' }).click()]);
    expect(download.suggestedFilename()).toBe('badge.txt');
    expect(await streamText(await download.createReadStream())).toBe(content);

    await page.getByRole('navigation', { name: 'Collection leads' }).getByRole('link', { name: 'Records' }).click();
    await containsText(rowOf('Ada'), '1 attached');
    // The record's panel names its files, with a download for each.
    const files = (await openRecord('Ada')).getByRole('region', { name: 'Files' });
    await containsText(files, 'badge.txt (195 KiB)');
    await shown(files.getByRole('button', { name: 'Download badge.txt' }));
    await page.keyboard.press('Escape');
    await recordPanel().waitFor({ state: 'detached' });
  });

  it('moves a collection to the trash, names what deleting it for good would destroy, and restores it', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Collections' }).click();
    await page.getByRole('button', { name: 'Move to trash: leads' }).click();
    await page.getByRole('dialog', { name: 'Move leads to the trash?' }).getByRole('button', { name: 'Move to trash' }).click();
    await containsText(page.getByRole('status'), 'leads is in the trash');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trash' }).click();
    await page.getByRole('button', { name: 'Delete for good: leads' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete leads for good?' });
    await containsText(dialog, 'This deletes leads for good, with 5 records, 1 file (195 KiB), all its schema versions and indexes.');
    await d.shot('data-trash-confirm');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Restore leads' }).click();
    await hasText(page.getByRole('status'), 'leads is back.');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Collections' }).click();
    await shown(page.getByRole('link', { name: 'leads' }));
  });

  it('offers a viewer only what a viewer may do', async () => {
    const headers = { 'x-baas-workspace': d.owner.workspaceId };
    const invite = await page.request.post('/v1/invites', { data: { email: 'vera@example.com', role: 'viewer' }, headers });
    expect(invite.status()).toBe(201);
    const context = await d.newContext();
    const accepted = await context.request.post(`/v1/invites/${((await invite.json()) as { token: string }).token}/accept`, { data: { name: 'Vera Viewer', password: 'viewer password 1' } });
    expect(accepted.status()).toBe(200);
    const viewer = await context.newPage();
    await viewer.goto('/collections/leads/records');
    await viewer.getByRole('row').filter({ hasText: 'Ada' }).first().waitFor();
    for (const name of ['New record', 'Import…']) expect(await viewer.getByRole('button', { name }).count(), name).toBe(0);
    // No checkboxes to pick rows to change, and the record's panel offers nothing to change.
    expect(await viewer.getByRole('checkbox', { name: /^Select/ }).count()).toBe(0);
    await viewer.getByRole('row').filter({ hasText: 'Ada' }).first().locator('th').click();
    await viewer.getByRole('complementary', { name: /^Record rec_/ }).getByRole('region', { name: 'History' }).waitFor();
    expect(await viewer.getByRole('button', { name: /^Edit record|^Move to trash: record/ }).count()).toBe(0);
    expect(await viewer.getByRole('button', { name: 'Export…' }).count()).toBe(1);
    const tabs = viewer.getByRole('navigation', { name: 'Collection leads' });
    expect(await tabs.getByRole('link', { name: 'Indexes' }).count()).toBe(0);
    await viewer.goto('/');
    await viewer.getByRole('link', { name: 'leads' }).waitFor();
    expect(await viewer.getByRole('button', { name: 'Create collection' }).count()).toBe(0);
    expect(await viewer.getByRole('button', { name: 'Move to trash: leads' }).count()).toBe(0);
    await d.shot('data-viewer-collections', viewer);
    await context.close();
  });

  it('scrolls a wide records table inside its box, keeping the id column in view', async () => {
    const headers = { 'x-baas-workspace': d.owner.workspaceId };
    expect((await page.request.post('/v1/collections', { data: { name: 'wide' }, headers })).status()).toBe(201);
    const data = Object.fromEntries(Array.from({ length: 12 }, (_, index) => [`field_${index}`, `a rather long value number ${index} to fill the column`]));
    expect((await page.request.post('/v1/collections/wide/records', { data: { data }, headers })).status()).toBe(201);
    await page.goto('/collections/wide/records');
    const table = page.getByRole('table', { name: 'Records of wide' });
    await table.waitFor();
    // The page itself does not scroll sideways: the table's box does.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    const wrap = page.locator('.table-wrap').filter({ has: table });
    expect(await wrap.evaluate((element) => element.scrollWidth > element.clientWidth)).toBe(true);
    await wrap.evaluate((element) => {
      element.scrollLeft = element.scrollWidth;
    });
    // The row's checkbox, then its id, stay at the left edge of the box.
    const selectCell = table.locator('tbody td.select-cell').first();
    const idCell = table.locator('tbody th').first();
    const [wrapBox, selectBox, idBox] = [await wrap.boundingBox(), await selectCell.boundingBox(), await idCell.boundingBox()];
    expect(Math.abs(selectBox!.x - wrapBox!.x)).toBeLessThan(2);
    expect(Math.abs(idBox!.x - (selectBox!.x + selectBox!.width))).toBeLessThan(2);
    // The hint names fields of the records shown when no schema is active.
    await containsText(page.getByRole('search').locator('.hint'), 'data.field_0');
    await d.shot('data-records-wide');
  });

  it('gives curl and SDK examples for the collection, and the curl one works as pasted', async () => {
    await page.goto('/collections/leads');
    const curl = await page.getByLabel('curl', { exact: true }).innerText();
    expect(curl).toContain(`'${d.baseUrl}/v1/collections/leads/records'`);
    // A record shaped like the active schema (name, age, status), so the example passes it.
    expect(curl).toContain(`-d '{"data":{"name":"text","age":1,"status":"text"}}'`);
    const sdk = await page.getByLabel('JavaScript (@plainbase/sdk)').innerText();
    expect(sdk).toContain(`new Plainbase({ url: "${d.baseUrl}", key: process.env.PLAINBASE_KEY })`);
    expect(sdk).toContain('pb.collection("leads").records');
    await d.shot('data-collection-snippets');

    const headers = { 'x-baas-workspace': d.owner.workspaceId };
    const made = await page.request.post('/v1/keys', { headers, data: { name: 'snippet', scopes: ['records:read', 'records:create'] } });
    expect(made.status()).toBe(201);
    const { secret } = (await made.json()) as { secret: string };
    const { stdout } = await promisify(execFile)('bash', ['-c', `set -e\n${curl}`], { env: { ...process.env, PLAINBASE_KEY: secret } });
    const created = JSON.parse(stdout.slice(0, stdout.indexOf('}{') + 1)) as { id: string; data: unknown };
    expect(created.data).toEqual({ name: 'text', age: 1, status: 'text' });
    const newest = JSON.parse(stdout.slice(stdout.indexOf('}{') + 1)) as { data: { id: string }[] };
    expect(newest.data[0]!.id).toBe(created.id);
  });

  it('cancels what a page was still loading when it is left', async () => {
    const filesList = '**/v1/collections/leads/files?**';
    const isFilesList = (url: string) => url.includes('/v1/collections/leads/files?');
    // How many list requests the page makes varies with timing (a slow machine may see the key
    // of the query change once while the page opens, and that cancels the first one too), so the
    // test counts them: every one that started must end aborted, none answered.
    let started = 0;
    const aborted: string[] = [];
    const answered: string[] = [];
    page.on('request', (request) => {
      if (isFilesList(request.url())) started += 1;
    });
    page.on('requestfailed', (request) => {
      if (isFilesList(request.url())) aborted.push(request.failure()?.errorText ?? 'failed');
    });
    page.on('requestfinished', (request) => {
      if (isFilesList(request.url())) answered.push(request.url());
    });
    // The list is held until the page has been left (however slow the machine), so it is still
    // waiting when the person moves on; by then the browser has given it up and continue throws.
    let leave!: () => void;
    const left = new Promise<void>((resolve) => (leave = resolve));
    await page.route(filesList, async (route) => {
      await left;
      await route.continue().catch(() => undefined);
    });
    await page.goto('/collections/leads/files');
    await page.getByRole('navigation', { name: 'Collection leads' }).getByRole('link', { name: 'Records' }).click();
    await page.getByRole('heading', { name: 'leads: records' }).waitFor();
    leave();
    await expect.poll(() => aborted.length > 0 && aborted.length === started, { timeout: 10_000 }).toBe(true);
    expect(new Set(aborted)).toEqual(new Set(['net::ERR_ABORTED']));
    expect(answered).toEqual([]);
    await page.unroute(filesList);
  });

  it('saves the collection settings, asks before making a collection public, and renames it', async () => {
    const headers = { 'x-baas-workspace': d.owner.workspaceId };
    const collectionOf = async (name: string) => (await (await page.request.get(`/v1/collections/${name}`, { headers })).json()) as { public: boolean };
    expect((await page.request.post('/v1/collections', { data: { name: 'settings_demo' }, headers })).status()).toBe(201);
    await page.goto('/collections/settings_demo');
    const form = page.getByRole('form', { name: 'Collection settings' });
    await form.getByRole('button', { name: 'Save settings' }).click();
    await hasText(form.getByRole('status'), 'Nothing changed.');

    await form.getByRole('switch', { name: /^Public/ }).check();
    await form.getByRole('button', { name: 'Save settings' }).click();
    const dialog = page.getByRole('dialog', { name: 'Make settings_demo public?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await form.getByRole('status').count()).toBe(0);
    expect((await collectionOf('settings_demo')).public).toBe(false);
    await form.getByRole('button', { name: 'Save settings' }).click();
    await dialog.getByRole('button', { name: 'Make public' }).click();
    await hasText(form.getByRole('status'), 'Saved.');
    expect((await collectionOf('settings_demo')).public).toBe(true);

    await form.getByLabel('Name').fill('settings_renamed');
    await form.getByRole('button', { name: 'Save settings' }).click();
    await page.waitForURL(/\/collections\/settings_renamed$/);
    await hasText(form.getByRole('status'), 'Saved.');
    expect((await collectionOf('settings_renamed')).public).toBe(true);
  });

  it("shows the dashboard's own page for an address that is no page", async () => {
    const answer = await page.goto('/collections/wide/nothing-here');
    expect(answer?.status()).toBe(404);
    await shown(page.getByRole('heading', { name: 'Page not found' }));
    await shown(page.getByRole('navigation', { name: 'Main' }));
    // What a browser left out of the log above: this 404 was asked for.
    const asked = failedLoads.findIndex((line) => line === `404 ${d.baseUrl}/collections/wide/nothing-here`);
    expect(asked).toBeGreaterThanOrEqual(0);
    failedLoads.splice(asked, 1);
  });

  it('asked for no file the service does not have (a favicon included)', async () => {
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    expect(icon).toBe('/favicon.svg');
    const answer = await page.request.get(icon!);
    expect(answer.status()).toBe(200);
    expect(answer.headers()['content-type']).toBe('image/svg+xml');
    expect(failedLoads).toEqual([]);
  });
});

/** --danger of web/src/styles.css, as the browser reports a background in it. */
const DANGER_RED = 'rgb(179, 38, 30)';

async function backgroundOf(locator: Locator): Promise<string> {
  return locator.evaluate((element) => getComputedStyle(element).backgroundColor);
}

/** Waits until the element is there and visible (playwright-core has no expect of its own). */
async function shown(locator: Locator): Promise<void> {
  await locator.first().waitFor({ state: 'visible' });
}

async function hasText(locator: Locator, text: string): Promise<void> {
  await expect.poll(async () => (await locator.first().innerText()).trim(), { timeout: 10_000 }).toBe(text);
}

async function containsText(locator: Locator, text: string): Promise<void> {
  await expect.poll(async () => locator.first().innerText(), { timeout: 10_000 }).toContain(text);
}

async function streamText(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}
