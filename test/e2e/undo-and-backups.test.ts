import fs from 'node:fs';
import type { APIRequestContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { startDashboard, type Dashboard } from './support/dashboard.js';

/**
 * Undoing what one key did, and the owners' backups, in Chromium against the real service.
 * A key changes, creates and trashes records; the owner checks on the key's row what undoing its
 * changes since a moment would do (a dry run that changes nothing), sees the record someone else
 * changed after it as left alone, then undoes it for real; the records are as before, the one left
 * alone and a second workspace are untouched. An error from the service is shown once. An admin may
 * undo too; an editor is not offered it. The owner backs up now, sees the backup listed with its
 * size and time, and downloads it byte for byte; an admin sees no Backups.
 */
describe.skipIf(!inject('chromiumPresent'))('dashboard: undo a key’s changes, and backups', () => {
  let d: Dashboard;
  let page: Page;
  let keyId = '';
  let token = '';
  let since = '';
  /** The owner's records, by what happens to them: the key changes, trashes; someone changes after the key. */
  const ids = { changed: '', trashed: '', contested: '', created: '', otherWorkspace: '' };
  let otherWorkspaceId = '';

  const headersFor = (workspaceId: string) => ({ 'x-baas-workspace': workspaceId });

  /** A JSON call with a browser profile's session, in a workspace (the owner's first by default). */
  const callApi = async (request: APIRequestContext, method: string, url: string, data?: unknown, workspaceId = d.owner.workspaceId) => {
    const response = await request.fetch(url, { method, data, headers: headersFor(workspaceId) });
    return { status: response.status(), body: (await response.json().catch(() => null)) as any };
  };

  /** The key at work, as a program: a JSON call with its token. */
  const callWithKey = async (method: string, url: string, data?: unknown) => {
    const response = await fetch(`${d.baseUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(data === undefined ? {} : { 'content-type': 'application/json' }) },
      body: data === undefined ? undefined : JSON.stringify(data),
    });
    return { status: response.status, body: (await response.json().catch(() => null)) as any };
  };

  /** A record of `leads` as stored now, trashed or not. */
  const recordNow = async (id: string, workspaceId = d.owner.workspaceId, collection = 'leads') => {
    const read = await callApi(d.context.request, 'GET', `/v1/collections/${collection}/records/${id}?trashed=true`, undefined, workspaceId);
    expect(read.status).toBe(200);
    return read.body as { data: Record<string, unknown>; revision: number; trashedAt: string | null };
  };

  const textOf = async (locator: Locator) => (await locator.textContent())?.replace(/\s+/g, ' ').trim() ?? '';
  const keyRow = (on: Page, name: string) => on.getByRole('row').filter({ has: on.getByRole('rowheader', { name: new RegExp(`^${name}\\b`) }) });

  /** Opens the undo dialog on the key's row and fills in the moment (as the browser's local time, to the second). */
  const openUndo = async (on: Page) => {
    await on.goto('/keys');
    await keyRow(on, 'importer').getByRole('button', { name: 'Undo changes of importer' }).click();
    const dialog = on.getByRole('dialog', { name: 'Undo the changes of “importer”' });
    const local = await on.evaluate((iso) => {
      const date = new Date(iso);
      const pad = (value: number) => String(value).padStart(2, '0');
      return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
    }, since);
    await dialog.getByLabel('Undo changes since').fill(local);
    return dialog;
  };

  /** A second person of the workspace with `role`, signed in in their own browser profile. */
  const personWithRole = async (role: 'admin' | 'editor', email: string) => {
    const invite = await callApi(d.context.request, 'POST', '/v1/invites', { email, role });
    expect(invite.status).toBe(201);
    const context = await d.newContext();
    const accepted = await context.request.post(`/v1/invites/${invite.body.token}/accept`, { data: { name: `${role} person`, password: `${role} password 12345` } });
    expect(accepted.status()).toBe(200);
    return context.newPage();
  };

  beforeAll(async () => {
    d = await startDashboard();
    page = d.page;
    const request = d.context.request;
    expect((await callApi(request, 'POST', '/v1/collections', { name: 'leads' })).status).toBe(201);
    const made = await callApi(request, 'POST', '/v1/keys', { name: 'importer', scopes: ['records:read', 'records:create', 'records:update', 'records:delete'] });
    expect(made.status).toBe(201);
    keyId = made.body.id;
    token = made.body.secret;
    for (const name of ['changed', 'trashed', 'contested'] as const) {
      const created = await callApi(request, 'POST', '/v1/collections/leads/records', { data: { name, stage: 'before' } });
      expect(created.status).toBe(201);
      ids[name] = created.body.id;
    }
    // A second workspace of the same owner, with a record of its own: nothing here may touch it.
    const other = await request.post('/v1/workspaces', { data: { name: 'Second' } });
    expect(other.status()).toBe(201);
    otherWorkspaceId = ((await other.json()) as { id: string }).id;
    expect((await callApi(request, 'POST', '/v1/collections', { name: 'leads' }, otherWorkspaceId)).status).toBe(201);
    const elsewhere = await callApi(request, 'POST', '/v1/collections/leads/records', { data: { name: 'elsewhere' } }, otherWorkspaceId);
    expect(elsewhere.status).toBe(201);
    ids.otherWorkspace = elsewhere.body.id;

    // The moment to undo from: a whole second after the owner's writes (the input is to the second).
    since = new Date(Math.ceil((Date.now() + 1) / 1000) * 1000).toISOString();
    await new Promise((resolve) => setTimeout(resolve, Date.parse(since) - Date.now() + 50));

    // The key at work: changes one record, trashes one, creates one, changes one that someone changes after it.
    expect((await callWithKey('PATCH', `/v1/collections/leads/records/${ids.changed}`, { data: { stage: 'by key' } })).status).toBe(200);
    expect((await callWithKey('DELETE', `/v1/collections/leads/records/${ids.trashed}`)).status).toBeLessThan(300);
    const created = await callWithKey('POST', '/v1/collections/leads/records', { data: { name: 'made by key' } });
    expect(created.status).toBe(201);
    ids.created = created.body.id;
    expect((await callWithKey('PATCH', `/v1/collections/leads/records/${ids.contested}`, { data: { stage: 'by key' } })).status).toBe(200);
    expect((await callApi(request, 'PATCH', `/v1/collections/leads/records/${ids.contested}`, { data: { stage: 'by owner, after the key' } })).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await d?.stop();
  });

  beforeEach(() => d.explainFailure());

  it('checks first: the counts and the record left alone, and nothing changes', async () => {
    const before = await Promise.all([ids.changed, ids.trashed, ids.contested, ids.created].map((id) => recordNow(id)));
    const dialog = await openUndo(page);
    await dialog.getByRole('button', { name: 'Check what would be undone' }).click();
    const summary = dialog.getByRole('region', { name: 'What would be undone' });
    await summary.waitFor();
    expect(await textOf(summary.getByRole('status'))).toBe(
      'Undoing would put back the data of 1 record, move 1 record it created to the trash and restore 1 record it trashed. Nothing has changed yet.',
    );
    const leftAlone = summary.getByRole('table', { name: 'Records left alone' }).getByRole('row');
    expect(await leftAlone.count()).toBe(2); // the header and one record
    // The record's id heads its row (the shared table's row header), then its cells.
    const leftRecord = leftAlone.nth(1);
    expect([await leftRecord.getByRole('rowheader').textContent(), ...(await leftRecord.getByRole('cell').allTextContents())]).toEqual([ids.contested, 'leads', 'changed by someone else since']);
    await d.shot('undo-dry-run');

    // The check wrote nothing: every record is as it was, to the revision.
    const after = await Promise.all([ids.changed, ids.trashed, ids.contested, ids.created].map((id) => recordNow(id)));
    expect(after).toEqual(before);

    // Cancel closes it; nothing was undone.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await recordNow(ids.changed)).data).toEqual({ name: 'changed', stage: 'by key' });
  });

  it('shows an error from the service once, and a moment in the future before asking', async () => {
    const dialog = await openUndo(page);
    // The service refusing (a stand-in answer: the route's own refusals are the API's tests).
    await page.route('**/v1/history/revert', (route) =>
      route.fulfill({ status: 409, contentType: 'application/json', body: JSON.stringify({ error: { code: 'CONFLICT', message: 'Another revert is running.' } }) }),
    );
    try {
      await dialog.getByRole('button', { name: 'Check what would be undone' }).click();
      await page.getByRole('alert').filter({ hasText: 'Another revert is running.' }).waitFor();
      expect(await page.getByText('Another revert is running.').count()).toBe(1);
      expect(await dialog.getByRole('region').count()).toBe(0);
    } finally {
      await page.unroute('**/v1/history/revert');
    }
    const future = await page.evaluate(() => {
      const date = new Date(Date.now() + 3600_000);
      const pad = (value: number) => String(value).padStart(2, '0');
      return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:00`;
    });
    await dialog.getByLabel('Undo changes since').fill(future);
    // A new moment clears the last step's error.
    expect(await page.getByText('Another revert is running.').count()).toBe(0);
    await dialog.getByRole('button', { name: 'Check what would be undone' }).click();
    await dialog.getByText('Give a moment in the past.').waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  it('undoes for real: data put back, the created record trashed, the trashed one back; the rest untouched', async () => {
    const contested = await recordNow(ids.contested);
    const elsewhere = await recordNow(ids.otherWorkspace, otherWorkspaceId);
    const dialog = await openUndo(page);
    await dialog.getByRole('button', { name: 'Check what would be undone' }).click();
    await dialog.getByRole('region', { name: 'What would be undone' }).waitFor();
    await dialog.getByRole('button', { name: 'Undo these changes' }).click();
    const result = dialog.getByRole('region', { name: 'Undo result' });
    await result.waitFor();
    expect(await textOf(result.getByRole('status'))).toBe('Undone: the data of 1 record put back, 1 record it created moved to the trash and 1 record it trashed restored.');
    expect(await result.getByRole('table', { name: 'Records left alone' }).getByRole('row').nth(1).getByRole('rowheader').textContent()).toBe(ids.contested);
    await d.shot('undo-done');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const changed = await recordNow(ids.changed);
    expect(changed.data).toEqual({ name: 'changed', stage: 'before' });
    expect(changed.trashedAt).toBeNull();
    expect((await recordNow(ids.trashed)).trashedAt).toBeNull();
    expect((await recordNow(ids.created)).trashedAt).not.toBeNull();
    // The record someone else changed after the key keeps that change; the other workspace is as it was.
    expect(await recordNow(ids.contested)).toEqual(contested);
    expect(await recordNow(ids.otherWorkspace, otherWorkspaceId)).toEqual(elsewhere);

    // Done once, there is nothing left to undo.
    const again = await openUndo(page);
    await again.getByRole('button', { name: 'Check what would be undone' }).click();
    await again.getByText('Nothing to undo: this key changed no record since then that can be put back.').waitFor();
    expect(await again.getByRole('button', { name: 'Undo these changes' }).isDisabled()).toBe(true);
    await again.getByRole('button', { name: 'Cancel' }).click();
  });

  it('offers undo on a revoked key, and to admins; not to editors', async () => {
    expect((await callApi(d.context.request, 'POST', `/v1/keys/${keyId}/revoke`)).status).toBe(200);
    await page.goto('/keys');
    const row = keyRow(page, 'importer');
    await row.getByText('Revoked').waitFor();
    expect(await row.getByRole('button', { name: /^(Rotate|Revoke) / }).count()).toBe(0);
    expect(await row.getByRole('button', { name: 'Undo changes of importer' }).count()).toBe(1);

    const admin = await personWithRole('admin', 'ada@example.com');
    await admin.goto('/keys');
    await keyRow(admin, 'importer').getByRole('button', { name: 'Undo changes of importer' }).waitFor();
    const editor = await personWithRole('editor', 'eddie@example.com');
    expect((await editor.context().request.post('/v1/keys', { headers: headersFor(d.owner.workspaceId), data: { name: 'mine', scopes: ['records:read'] } })).status()).toBe(201);
    await editor.goto('/keys');
    await keyRow(editor, 'mine').waitFor();
    expect(await editor.getByRole('button', { name: /^Undo changes/ }).count()).toBe(0);
    await admin.context().close();
    await editor.context().close();
  });

  it('backs up now, lists the backup with its size and time, and downloads it byte for byte', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Backups' }).click();
    await page.getByRole('heading', { name: 'Backups', level: 1 }).waitFor();
    await page.getByText('No backups yet.').waitFor();
    const [started] = await Promise.all([
      page.waitForResponse((response) => response.url().endsWith('/v1/backups') && response.request().method() === 'POST'),
      page.getByRole('button', { name: 'Back up now' }).click(),
    ]);
    expect(started.status(), await started.text()).toBe(202);
    const name = ((await started.json()) as { name: string }).name;
    await page.getByText(`Backup ${name} is ready.`).waitFor({ timeout: 60_000 });
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });
    const listed = await callApi(d.context.request, 'GET', '/v1/backups');
    const backup = (listed.body.data as { name: string; size: number; createdAt: string }[]).find((entry) => entry.name === name)!;
    expect(backup).toBeDefined();
    const cells = await row.getByRole('cell').allTextContents();
    expect(cells[0]).toMatch(/^\d+(\.\d)? (B|KiB|MiB|GiB)$/);
    expect(cells[1]).toMatch(/\d/);
    expect(await row.locator('time').getAttribute('datetime')).toBe(backup.createdAt);
    await d.shot('backups');

    // A plain link (the route needs no workspace): the browser saves the archive as it arrives.
    const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('link', { name: `Download ${name}` }).click()]);
    expect(download.suggestedFilename()).toBe(name);
    const saved = await download.path();
    const direct = await d.context.request.get(`/v1/backups/${encodeURIComponent(name)}/content`);
    expect(direct.status()).toBe(200);
    const bytes = fs.readFileSync(saved);
    expect(bytes.length).toBe(backup.size);
    expect(bytes.equals(await direct.body())).toBe(true);
  });

  it('says so to an owner who is not the service’s first owner, once, and offers nothing', async () => {
    const invite = await callApi(d.context.request, 'POST', '/v1/invites', { email: 'otto@example.com', role: 'viewer' });
    const context = await d.newContext();
    expect((await context.request.post(`/v1/invites/${invite.body.token}/accept`, { data: { name: 'Otto Other', password: 'other owner password 1' } })).status()).toBe(200);
    // Otto owns a workspace of his own, and opens it.
    const own = await context.request.post('/v1/workspaces', { data: { name: 'Otto’s' } });
    expect(own.status()).toBe(201);
    const other = await context.newPage();
    await other.goto('/');
    await other.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Otto’s (owner)' });
    await other.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Backups' }).click();
    const refusal = other.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.allTextContents()).toEqual(['Backups hold every workspace of this Plainbase: only its first owner may take or download them.']);
    expect(await other.getByRole('button', { name: 'Back up now' }).count()).toBe(0);
    expect(await other.getByRole('link', { name: /^Download / }).count()).toBe(0);
    await context.close();
  });

  it('hides backups from an admin', async () => {
    const admin = await personWithRole('admin', 'alex@example.com');
    await admin.goto('/keys');
    await admin.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await admin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Backups' }).count()).toBe(0);
    await admin.goto('/backups');
    await admin.getByRole('heading', { name: 'Not available to your role' }).waitFor();
    await admin.context().close();
  });
});
