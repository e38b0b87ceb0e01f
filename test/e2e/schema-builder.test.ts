import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDashboard, type Dashboard } from './support/dashboard.js';

/**
 * A schema version written with the field builder, in Chromium against the real service: the JSON
 * tab follows the builder and the builder the JSON, the changes from the previous version are
 * listed in words, the stored records it would refuse are counted before it is activated; then
 * the record form it makes has a checkbox, a text area and a date picker, says a problem once,
 * and a create gives one notice.
 */
describe.skipIf(!inject('chromiumPresent'))('dashboard: the schema builder', () => {
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
  async function call(method: 'GET' | 'POST', url: string, data?: unknown): Promise<any> {
    const response = await d.context.request.fetch(url, { method, headers: { 'x-baas-workspace': d.owner.workspaceId }, ...(data === undefined ? {} : { data }) });
    expect(response.status(), `${method} ${url}: ${await response.text()}`).toBeLessThan(300);
    return response.json();
  }

  const field = (label: string) => page.getByRole('group', { name: label, exact: true });

  it('builds a version, shows its JSON, its changes and what it would refuse, then activates it', async () => {
    d.explainFailure();
    await call('POST', '/v1/collections', { name: 'tasks' });
    await call('POST', '/v1/collections/tasks/schemas', { schema: { type: 'object', properties: { title: { type: 'string' } } } });
    await call('POST', '/v1/collections/tasks/schemas/1/activate');
    // Two the new version accepts, two it would refuse (no title; a done that is not yes or no).
    for (const data of [{ title: 'Write docs' }, { title: 'Fix bug', done: false }, { done: true }, { title: 'Plan', done: 'yes' }]) {
      await call('POST', '/v1/collections/tasks/records', { data });
    }

    await page.goto('/collections/tasks/schemas');
    await page.getByRole('button', { name: 'New schema version' }).click();
    expect(await page.getByRole('tab', { name: 'Builder' }).getAttribute('aria-selected')).toBe('true');
    // The builder starts from version 1: its one field.
    expect(await field('Field 1').getByLabel('Name').inputValue()).toBe('title');
    await field('Field 1').getByLabel('Required').check();
    const add = async (name: string, kind: string) => {
      await page.getByRole('button', { name: 'Add field', exact: true }).click();
      const row = field(`Field ${await page.locator('fieldset.builder-field').count()}`);
      await row.getByLabel('Name').fill(name);
      await row.getByLabel('Kind').selectOption(kind);
      return row;
    };
    await add('done', 'boolean');
    const status = await add('status', 'choice');
    await status.getByLabel('Choices (one per line)').fill('open\nclosed');
    await add('due', 'date');
    await add('notes', 'long-text');
    await d.shot('schema-builder-fields');

    await page.getByRole('tab', { name: 'JSON' }).click();
    const json = page.getByLabel('Schema (JSON Schema 2020-12)');
    const built = {
      type: 'object',
      properties: {
        title: { type: 'string' },
        done: { type: 'boolean' },
        status: { type: 'string', enum: ['open', 'closed'] },
        due: { type: 'string', format: 'date' },
        notes: { type: 'string', 'x-long-text': true },
      },
      required: ['title'],
    };
    expect(JSON.parse(await json.inputValue())).toEqual(built);

    // Edited as JSON, the builder follows.
    await json.fill(JSON.stringify({ ...built, properties: { ...built.properties, title: { type: 'string', maxLength: 80 } } }, null, 2));
    await page.getByRole('tab', { name: 'Builder' }).click();
    expect(await field('Field 1').getByLabel('Max length').inputValue()).toBe('80');
    // JSON it cannot represent stays in charge, and the builder says why.
    await page.getByRole('tab', { name: 'JSON' }).click();
    const withConst = JSON.parse(await json.inputValue());
    await json.fill(JSON.stringify({ ...withConst, additionalProperties: false }));
    await page.getByRole('tab', { name: 'Builder' }).click();
    await page.getByText('The builder cannot show this schema: The schema uses "additionalProperties"').waitFor();
    await page.getByRole('tab', { name: 'JSON' }).click();
    await json.fill(JSON.stringify(withConst, null, 2));

    const changes = page.getByRole('region', { name: 'Changes from version 1' });
    await expect.poll(() => changes.innerText()).toContain('Added done: Yes / no');
    const words = await changes.innerText();
    expect(words).toContain('Added notes: Long text');
    expect(words).toContain('Changed title: now required; maxLength (none) → 80');
    await d.shot('schema-builder-form');

    await page.getByLabel('Activate it now').uncheck();
    await page.getByRole('button', { name: 'Create as draft' }).click();
    await page.getByText('Version 2 is saved as a draft.').waitFor();
    const version2 = page.locator('li.version').filter({ has: page.getByRole('heading', { name: 'Version 2' }) });
    await expect.poll(() => version2.getByTestId('stored-check-2').innerText()).toContain('Version 2 would refuse 2 of 4 stored records.');
    expect(await version2.getByRole('region', { name: 'Changes from version 1' }).innerText()).toContain('Added status: Choice');
    await d.shot('schema-builder-versions');

    await page.getByRole('button', { name: 'Activate version 2' }).click();
    const dialog = page.getByRole('dialog', { name: 'Activate version 2?' });
    await expect.poll(() => dialog.innerText()).toContain('2 records of 4');
    await dialog.getByRole('button', { name: 'Activate anyway' }).click();
    await page.getByText('Version 2 is active: every new or changed record must match it.').waitFor();
  });

  it('makes a record form with a checkbox, a text area and a date picker, one error list and one notice', async () => {
    d.explainFailure();
    await page.getByRole('navigation', { name: 'Collection tasks' }).getByRole('link', { name: 'Records' }).click();
    await page.getByRole('button', { name: 'New record' }).click();
    const form = page.locator('.record-form');
    const input = (name: string) => form.getByLabel(name, { exact: true });
    await input('title').waitFor();
    expect(await input('done').getAttribute('type')).toBe('checkbox');
    expect(await input('notes').evaluate((element) => element.tagName)).toBe('TEXTAREA');
    expect(await input('due').getAttribute('type')).toBe('date');

    // Nothing typed in the required title: said once, beside the field, and not again in a list.
    await input('notes').fill('line one\nline two');
    await page.getByRole('button', { name: 'Create record' }).click();
    await page.getByText('title is required').waitFor();
    expect(await page.getByText('title is required').count()).toBe(1);
    expect(await page.locator('.field-errors').count()).toBe(0);
    expect(await page.getByText('One field above needs a change before the record can be saved.').count()).toBe(1);
    await d.shot('schema-builder-record-error');

    await input('title').fill('Ship it');
    await input('done').check();
    await input('status').selectOption('open');
    await input('due').fill('2026-12-01');
    await page.getByRole('button', { name: 'Create record' }).click();
    const created = page.getByRole('status').filter({ hasText: 'Created record rec_' });
    await created.waitFor();
    const id = /rec_\w+/.exec(await created.innerText())![0];
    // A record made elsewhere afterwards is announced by the live stream: by then the stream has
    // brought this tab's own create too (events come in order), and that one was not announced again.
    const other = await call('POST', '/v1/collections/tasks/records', { data: { title: 'From elsewhere' } });
    await page.getByText(`Record ${other.id} was added.`).waitFor();
    expect(await page.getByText(`Record ${id} was added.`).count()).toBe(0);
    expect(await page.getByRole('status').filter({ hasText: id }).count()).toBe(1);

    const saved = await call('GET', `/v1/collections/tasks/records/${id}`);
    expect(saved.data).toEqual({ title: 'Ship it', done: true, status: 'open', due: '2026-12-01', notes: 'line one\nline two' });
  });
});
