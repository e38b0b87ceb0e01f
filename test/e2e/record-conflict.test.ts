import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDashboard, type Dashboard } from './support/dashboard.js';

/**
 * Two writers on one record, in Chromium against the real service: the owner edits a record in
 * the dashboard while a program changes it through the API with its own key. The save must not
 * silently overwrite the program's change: the editor sends If-Match, gets 412 and shows both
 * versions, to reload the saved one or to overwrite it knowingly.
 */
describe.skipIf(!inject('chromiumPresent'))('dashboard: a record changed while it is being edited', () => {
  let d: Dashboard;
  let page: Page;
  let key: string;
  let recordId: string;

  beforeAll(async () => {
    d = await startDashboard();
    page = d.page;
    const headers = { 'x-baas-workspace': d.owner.workspaceId };
    const collection = await page.request.post('/v1/collections', { headers, data: { name: 'tickets' } });
    expect(collection.status()).toBe(201);
    const created = await page.request.post('/v1/collections/tickets/records', { headers, data: { data: { title: 'Printer jam', status: 'open' } } });
    recordId = (await created.json()).id;
    const made = await page.request.post('/v1/keys', { headers, data: { name: 'ticket bot', scopes: ['records:read', 'records:update'] } });
    key = (await made.json()).secret;
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
  });

  /** The program: changes the record through the API with its key, as another process would. */
  async function programSets(data: Record<string, unknown>): Promise<void> {
    const response = await fetch(`${d.baseUrl}/v1/collections/tickets/records/${recordId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data }),
    });
    expect(response.status).toBe(200);
  }
  async function savedData(): Promise<unknown> {
    const response = await fetch(`${d.baseUrl}/v1/collections/tickets/records/${recordId}`, { headers: { authorization: `Bearer ${key}` } });
    return (await response.json()).data;
  }
  async function openEditor(): Promise<Locator> {
    await page.goto('/collections/tickets/records');
    // The row opens the record in a side panel; its editor opens there.
    await page.getByRole('row').filter({ hasText: 'Printer' }).locator('th').click();
    await page.getByRole('complementary', { name: `Record ${recordId}` }).getByRole('button', { name: /^Edit record/ }).click();
    const editor = page.getByLabel('Data (JSON)');
    // Opened: the editor has read the record and its ETag.
    await expect.poll(() => editor.getAttribute('readonly')).toBeNull();
    return editor;
  }

  it('shows both versions on a conflict, and reloading takes the saved one', async () => {
    const editor = await openEditor();
    await programSets({ title: 'Printer jam', status: 'closed', closedBy: 'bot' });
    await editor.fill('{\n  "title": "Printer jam on floor 2",\n  "status": "open"\n}\n');
    await page.getByRole('button', { name: 'Save record' }).click();

    const conflict = page.getByRole('alert').filter({ hasText: 'This record was changed while you were editing it' });
    await conflict.waitFor();
    await expect.poll(() => page.getByTestId('conflict-mine').innerText()).toContain('Printer jam on floor 2');
    const saved = JSON.parse(await page.getByTestId('conflict-saved').innerText());
    expect(saved).toEqual({ title: 'Printer jam', status: 'closed', closedBy: 'bot' });
    // Nothing was overwritten, and Save waits for a choice.
    expect(await savedData()).toEqual({ title: 'Printer jam', status: 'closed', closedBy: 'bot' });
    expect(await page.getByRole('button', { name: 'Save record' }).isDisabled()).toBe(true);
    await d.shot('record-conflict');

    await page.getByRole('button', { name: 'Reload the saved version' }).click();
    await expect.poll(async () => JSON.parse(await editor.inputValue())).toEqual({ title: 'Printer jam', status: 'closed', closedBy: 'bot' });
    expect(await conflict.count()).toBe(0);
    // Editing on top of the reloaded version saves normally.
    await editor.fill('{\n  "title": "Printer jam",\n  "status": "closed",\n  "closedBy": "bot",\n  "note": "checked"\n}\n');
    await page.getByRole('button', { name: 'Save record' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved record' }).waitFor();
    expect(await savedData()).toEqual({ title: 'Printer jam', status: 'closed', closedBy: 'bot', note: 'checked' });
  });

  it('overwrites knowingly, and a change after the person looked is a new conflict', async () => {
    const editor = await openEditor();
    await programSets({ title: 'Printer jam', status: 'reopened' });
    await editor.fill('{\n  "title": "Printer fixed",\n  "status": "done"\n}\n');
    await page.getByRole('button', { name: 'Save record' }).click();
    await page.getByTestId('conflict-saved').waitFor();
    expect(JSON.parse(await page.getByTestId('conflict-saved').innerText())).toEqual({ title: 'Printer jam', status: 'reopened' });

    // The program changes it once more while the person reads: overwriting what they saw is refused again.
    await programSets({ title: 'Printer jam', status: 'escalated' });
    await page.getByRole('button', { name: 'Overwrite with my version' }).click();
    await expect.poll(async () => JSON.parse(await page.getByTestId('conflict-saved').innerText())).toEqual({ title: 'Printer jam', status: 'escalated' });
    expect(await savedData()).toEqual({ title: 'Printer jam', status: 'escalated' });

    await page.getByRole('button', { name: 'Overwrite with my version' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved record' }).waitFor();
    expect(await savedData()).toEqual({ title: 'Printer fixed', status: 'done' });
  });
});
