import { setTimeout as sleep } from 'node:timers/promises';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDashboard, type Dashboard } from './support/dashboard.js';

/**
 * The dashboard for people who do not write JSON, in Chromium against the real service: every
 * list newest first, a warning before activating a schema that stored records would not match,
 * a file attached to a record picked from a list, and a collection with a schema exported as CSV
 * and imported back from the same file with every field intact.
 */
describe.skipIf(!inject('chromiumPresent'))('dashboard: data without writing JSON', () => {
  let d: Dashboard;
  let page: Page;

  beforeAll(async () => {
    d = await startDashboard();
    page = d.page;
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
  });

  /** The API with the owner's session, as another tab would call it. */
  async function call(method: 'GET' | 'POST' | 'DELETE', url: string, options: { data?: unknown; body?: Buffer; contentType?: string } = {}): Promise<any> {
    const headers: Record<string, string> = { 'x-baas-workspace': d.owner.workspaceId };
    if (options.contentType) headers['content-type'] = options.contentType;
    const response = await d.context.request.fetch(url, { method, headers, ...(options.body ? { data: options.body } : options.data !== undefined ? { data: options.data } : {}) });
    expect(response.status(), `${method} ${url}: ${await response.text()}`).toBeLessThan(300);
    return response.json().catch(() => null);
  }

  /** Ids are made from the time: a few milliseconds apart, things are in a known order. */
  const apart = () => sleep(5);
  const firstRowText = (table: Locator) => table.locator('tbody tr').first().innerText();

  it('lists collections, the trash, files and keys newest first', async () => {
    for (const name of ['c_first', 'c_second', 'c_third', 'c_fourth']) {
      await call('POST', '/v1/collections', { data: { name } });
      await apart();
    }
    await page.goto('/');
    const collections = page.getByRole('table', { name: /^Collections of/ });
    await collections.getByRole('link', { name: 'c_fourth' }).waitFor();
    const names = await collections.locator('tbody tr').evaluateAll((rows) => rows.map((row) => row.querySelector('a')?.textContent ?? ''));
    expect(names).toEqual(['c_fourth', 'c_third', 'c_second', 'c_first']);

    await call('DELETE', '/v1/collections/c_first');
    await apart();
    await call('DELETE', '/v1/collections/c_second');
    await page.goto('/trash');
    const trash = page.getByRole('table', { name: 'Collections in the trash' });
    await trash.getByText('c_first').waitFor();
    await expect.poll(() => firstRowText(trash)).toContain('c_second');

    for (const name of ['old.txt', 'new.txt']) {
      await call('POST', `/v1/collections/c_third/files?name=${name}`, { body: Buffer.from(`content of ${name}`), contentType: 'text/plain' });
      await apart();
    }
    await page.goto('/collections/c_third/files');
    const files = page.getByRole('table', { name: 'Files of c_third' });
    await files.getByText('old.txt').waitFor();
    await expect.poll(() => firstRowText(files)).toContain('new.txt');

    for (const name of ['older key', 'newer key']) {
      await call('POST', '/v1/keys', { data: { name, scopes: ['records:read'] } });
      await apart();
    }
    await page.goto('/keys');
    const keys = page.getByRole('table', { name: 'API keys' });
    await keys.getByText('older key').waitFor();
    await expect.poll(() => firstRowText(keys)).toContain('newer key');
    await d.shot('keys-newest-first');
  });

  it('says how many stored records a schema would refuse before activating it', async () => {
    await call('POST', '/v1/collections', { data: { name: 'people' } });
    for (const data of [{ name: 'Ada', age: 36 }, { name: 'Bo', age: 'old' }, { age: 5 }, { name: 'Cy', age: 40 }]) {
      await call('POST', '/v1/collections/people/records', { data: { data } });
    }
    await page.goto('/collections/people/schemas');
    await page.getByRole('button', { name: 'New schema version' }).click();
    const schema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name'] };
    await page.getByRole('tab', { name: 'JSON' }).click();
    await page.getByLabel('Schema (JSON Schema 2020-12)').fill(JSON.stringify(schema, null, 2));
    await page.getByRole('button', { name: 'Create and activate' }).click();

    const dialog = page.getByRole('dialog', { name: 'Activate version 1?' });
    await dialog.waitFor();
    await expect.poll(() => dialog.innerText()).toContain('2 records of 4 in people would not match version 1');
    const examples = dialog.getByRole('list', { name: 'Records that would not match' });
    await expect.poll(() => examples.innerText()).toContain('data.age must be integer');
    expect(await examples.innerText()).toContain('data.name is required');
    await d.shot('schema-activation-warning');

    // Cancelled, the version stays a draft and nothing is enforced.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByText('No version is active: any JSON object is accepted.').waitFor();
    await page.getByRole('listitem').filter({ hasText: 'Version 1' }).getByText('draft: never active').waitFor();

    // Asked again from the version's own button, and confirmed.
    await page.getByRole('button', { name: 'Activate version 1' }).click();
    await expect.poll(() => dialog.innerText()).toContain('2 records of 4');
    await dialog.getByRole('button', { name: 'Activate anyway' }).click();
    await page.getByText('Version 1 is active: every new or changed record must match it.').waitFor();

    // A version every record matches is activated at once, without a question.
    await page.getByRole('button', { name: 'New schema version' }).click();
    await page.getByRole('tab', { name: 'JSON' }).click();
    await page.getByLabel('Schema (JSON Schema 2020-12)').fill(JSON.stringify({ type: 'object' }));
    await page.getByRole('button', { name: 'Create and activate' }).click();
    await page.getByText('Version 2 is active: every new or changed record must match it.').waitFor();
    expect(await dialog.isVisible()).toBe(false);
  });

  it('attaches a file to a record picked from the collection’s records', async () => {
    const { data: people } = await call('GET', '/v1/collections/people/records?limit=10&filter=data.name%20%3D%20%22Bo%22');
    const bo = people[0].id as string;
    const portrait = await call('POST', '/v1/collections/people/files?name=portrait.txt', { body: Buffer.from('a portrait'), contentType: 'text/plain' });
    await page.goto('/collections/people/files');
    await page.getByRole('button', { name: 'Attach portrait.txt to a record' }).click();
    const form = page.getByRole('form', { name: 'Attach portrait.txt to a record' });
    // Every record is offered, newest first; the search narrows them.
    await expect.poll(() => form.getByRole('radio').count()).toBe(4);
    await expect.poll(() => form.locator('.record-choice').first().innerText()).toContain('name: Cy · age: 40');
    await form.getByLabel('Find a record').fill('bo');
    await expect.poll(() => form.getByRole('radio').count()).toBe(1);
    await form.getByLabel('Find a record').fill('nobody');
    await form.getByText('No loaded record contains “nobody”.').waitFor();
    await form.getByLabel('Find a record').fill('Bo');
    await form.getByRole('radio', { name: new RegExp(bo) }).check();
    await d.shot('attach-file-picker');
    await form.getByRole('button', { name: 'Attach', exact: true }).click();
    await page.getByText(`portrait.txt is attached to record ${bo}.`).waitFor();
    const record = await call('GET', `/v1/collections/people/records/${bo}`);
    expect(record.files).toEqual([portrait.id]);
  });

  it('exports a collection with a schema as CSV and imports the file back with every field intact', async () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        note: { type: 'string' },
        age: { type: 'integer' },
        score: { type: 'number' },
        vip: { type: 'boolean' },
        address: { type: 'object' },
        tags: { type: 'array' },
      },
    };
    const records = [
      { name: 'Ada', note: 'says "hi", then\nleaves', age: 36, score: 9.75, vip: true, address: { city: 'London', geo: { lat: 51.5 } }, tags: ['a', 'b'] },
      { name: 'Bo', note: '', age: 0, score: -0.5, vip: false, address: {}, tags: [] },
      { name: 'Cy', age: -3, nickname: 'not in the schema' },
      { name: '', tags: [{ nested: [1, 2] }, 3] },
    ];
    for (const name of ['contacts', 'contacts_copy']) {
      await call('POST', '/v1/collections', { data: { name } });
      await call('POST', `/v1/collections/${name}/schemas`, { data: { schema } });
      await call('POST', `/v1/collections/${name}/schemas/1/activate`);
    }
    for (const data of records) {
      await call('POST', '/v1/collections/contacts/records', { data: { data } });
      await apart();
    }

    await page.goto('/collections/contacts/records');
    await page.getByRole('button', { name: 'Export…' }).click();
    await page.getByRole('radio', { name: /^CSV/ }).check();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toBe('contacts.csv');
    let csv = '';
    for await (const chunk of await download.createReadStream()) csv += chunk.toString();
    expect(csv.split('\r\n')[0]).toBe('id,createdAt,updatedAt,name,note,age,score,vip,address,tags,nickname');

    await page.goto('/collections/contacts_copy/records');
    await page.getByRole('button', { name: 'Import…' }).click();
    await page.getByLabel('File (NDJSON, JSON array or CSV)').setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    const leaveOut = page.getByRole('checkbox', { name: /Leave out the id, createdAt and updatedAt columns/ });
    await leaveOut.waitFor();
    expect(await leaveOut.isChecked()).toBe(true);
    await d.shot('import-csv-export');
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Import report' }).getByRole('status').innerText()).toBe('Imported 4 records.');

    const copied = await call('GET', '/v1/collections/contacts_copy/records?limit=10');
    expect(copied.data.map((record: { data: unknown }) => record.data)).toEqual(records);
  });
});
