import Database from 'better-sqlite3';
import path from 'node:path';
import type { APIRequestContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyWebhook } from '../../sdk/src/verify-webhook.js';
import { Receiver } from '../support/receiver.js';
import { readClipboard } from './support/browser.js';
import { startDashboard, type Dashboard } from './support/dashboard.js';

/**
 * Keys, service accounts and webhooks in a real browser against the real service: a key made in
 * the dashboard works in a real HTTP call, is rotated and then revoked and refused; a viewer is
 * offered only what a viewer may grant; a service account gets a key, a new role, and is deleted;
 * a webhook to a real receiver on loopback is pinged, delivers a record's event, shows it in its
 * log with the attempt, and replays it.
 */
describe.skipIf(!inject('chromiumPresent'))('dashboard: keys, service accounts and webhooks', () => {
  const TOKEN = /^pb_live_[0-9a-z]{26}_[0-9A-Za-z]{49}$/;
  let d: Dashboard;
  let page: Page;
  let receiver: Receiver;
  let receiverUrl: string;

  /** A JSON call to the API with a browser profile's session (its cookies) and the owner's workspace. */
  const callApi = async (request: APIRequestContext, method: 'GET' | 'POST', url: string, data?: unknown) => {
    const response = await request.fetch(url, { method, data, headers: { 'x-baas-workspace': d.owner.workspaceId } });
    return { status: response.status(), body: (await response.json().catch(() => null)) as any };
  };

  /** A real HTTP call to the service with a key, as a program would make it. */
  const callWithKey = async (token: string, url: string) => {
    const response = await fetch(`${d.baseUrl}${url}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: response.status, body: (await response.json()) as any };
  };

  /** Waits for something that happens in the background (a delivery), checking every 100 ms. */
  const eventually = async <T>(check: () => Promise<T | undefined | false>, what: string, withinMs = 10_000): Promise<T> => {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const result = await check();
      if (result) return result;
      if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  /** A key's row in the list: its row header starts with the key's name (whose it is follows). */
  const keyRow = (on: Page, name: string) => on.getByRole('row').filter({ has: on.getByRole('rowheader', { name: new RegExp(`^${name}\\b`) }) });

  const textOf = async (locator: Locator) => (await locator.textContent())?.replace(/\s+/g, ' ').trim() ?? '';

  /** The secret in the "shown once" panel, after checking it says so. */
  const revealedSecret = async (label: string) => {
    const panel = page.getByRole('region', { name: label, exact: true });
    await panel.waitFor();
    expect(await textOf(panel)).toContain('it is shown only this once and cannot be seen again');
    return (await textOf(page.getByLabel(`${label} value`)));
  };

  beforeAll(async () => {
    receiver = new Receiver();
    receiverUrl = await receiver.start();
    // A receiver on loopback is a private address: allowed only with this switch (and http:// only in development).
    d = await startDashboard({ env: { PLAINBASE_WEBHOOK_ALLOW_PRIVATE: '1' } });
    page = d.page;
    const made = await callApi(d.context.request, 'POST', '/v1/collections', { name: 'leads' });
    expect(made.status).toBe(201);
  }, 30_000);
  afterAll(async () => {
    await d?.stop();
    await receiver?.stop();
  });

  let secret = '';

  it('creates a key and shows its secret once; the key works in a real call', async () => {
    await page.goto('/keys');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('button', { name: 'Create key' }).click();
    const form = page.getByRole('form', { name: 'New API key' });
    // The owner may grant all twelve scopes.
    expect(await form.getByRole('group', { name: 'Scopes' }).getByRole('checkbox').count()).toBe(12);
    await form.getByLabel('Name').fill('CI');
    await form.getByRole('checkbox', { name: /records:create/ }).check();
    await d.shot('keys-create-form');
    await form.getByRole('button', { name: 'Create key' }).click();

    secret = await revealedSecret('Secret key');
    expect(secret).toMatch(TOKEN);
    await page.getByRole('button', { name: 'Copy secret key' }).click();
    expect(await readClipboard(page)).toBe(secret);
    await d.shot('keys-secret-once');

    const me = await callWithKey(secret, '/v1/me');
    expect(me.status).toBe(200);
    expect(me.body.key.name).toBe('CI');
    expect(me.body.grantedScopes).toEqual(['collections:read', 'records:read', 'records:create', 'schemas:read', 'files:read']);

    // Once dismissed, the secret is nowhere on the page, not even after a reload; the list shows its preview.
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.reload();
    const row = keyRow(page, 'CI');
    await row.waitFor();
    expect(await page.content()).not.toContain(secret);
    expect(await textOf(row)).toContain(`…${secret.slice(-4)}`);
    expect(await textOf(row)).toContain('Active');
    // The call above is its last use: time and address.
    expect(await textOf(row)).toContain('from 127.0.0.1');
    await d.shot('keys-list');
  });

  it('rotates the key with no grace: the old secret is refused, the new one works', async () => {
    await page.getByRole('button', { name: 'Rotate CI' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the key “CI”' });
    await dialog.getByLabel('Old secret keeps working for').selectOption({ label: 'None: the old secret stops now' });
    await d.shot('keys-rotate-dialog');
    await dialog.getByRole('button', { name: 'Rotate' }).click();
    const rotated = await revealedSecret('Secret key');
    expect(rotated).toMatch(TOKEN);
    expect(rotated).not.toBe(secret);
    expect((await callWithKey(secret, '/v1/me')).status).toBe(401);
    expect((await callWithKey(rotated, '/v1/me')).status).toBe(200);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    secret = rotated;
  });

  it('revokes the key after asking; the next call is refused', async () => {
    await page.getByRole('button', { name: 'Revoke CI' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke the key “CI”?' });
    expect(await textOf(dialog)).toContain('cannot be undone');
    await d.shot('keys-revoke-confirm');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    const row = keyRow(page, 'CI');
    await row.getByText('Revoked').waitFor();
    // A revoked key can no longer be rotated or revoked; only its changes can be undone (test/e2e/undo-and-backups.test.ts).
    expect(await row.getByRole('button', { name: /^(Rotate|Revoke) / }).count()).toBe(0);
    expect(await row.getByRole('button').allTextContents()).toEqual(['Undo changes…']);
    const refused = await callWithKey(secret, '/v1/me');
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('INVALID_API_KEY');
  });

  it('offers a viewer only the read scopes, and no service accounts or webhooks', async () => {
    const invite = await callApi(d.context.request, 'POST', '/v1/invites', { email: 'vera@example.com', role: 'viewer' });
    expect(invite.status).toBe(201);
    const viewer = await d.newContext();
    const accepted = await viewer.request.post(`/v1/invites/${invite.body.token}/accept`, { data: { name: 'Vera Viewer', password: 'viewer password 123' } });
    expect(accepted.status()).toBe(200);
    const viewerPage = await viewer.newPage();
    await viewerPage.goto('/keys');
    await viewerPage.getByRole('heading', { name: 'API keys' }).waitFor();
    const nav = viewerPage.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link', { name: 'API keys' }).count()).toBe(1);
    expect(await nav.getByRole('link', { name: 'Service accounts' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    // A viewer sees only their own keys: the owner's revoked key is not listed.
    expect(await keyRow(viewerPage, 'CI').count()).toBe(0);
    await viewerPage.getByRole('button', { name: 'Create key' }).click();
    const scopes = viewerPage.getByRole('form', { name: 'New API key' }).getByRole('group', { name: 'Scopes' }).getByRole('checkbox');
    const offered = await scopes.evaluateAll((boxes) => boxes.map((box) => box.closest('label')!.querySelector('code')!.textContent));
    expect(offered).toEqual(['collections:read', 'records:read', 'schemas:read', 'files:read']);
    await d.shot('keys-viewer-form', viewerPage);
    await viewer.close();
  });

  it('creates a service account, issues it a key, changes its role and deletes it', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Service accounts' }).click();
    await page.getByRole('button', { name: 'Create service account' }).click();
    const form = page.getByRole('form', { name: 'New service account' });
    await form.getByLabel('Name').fill('nightly sync');
    await form.getByLabel('Role').selectOption('viewer');
    await form.getByRole('button', { name: 'Create service account' }).click();
    const row = page.getByRole('row').filter({ hasText: 'nightly sync' });
    await row.waitFor();

    // Its key may hold only what its role (viewer) allows.
    await row.getByRole('button', { name: 'Issue key for nightly sync' }).click();
    const keyForm = page.getByRole('form', { name: 'New key for nightly sync' });
    expect(await keyForm.getByRole('group', { name: 'Scopes' }).getByRole('checkbox').count()).toBe(4);
    await keyForm.getByLabel('Name').fill('sync');
    await keyForm.getByRole('button', { name: 'Create key' }).click();
    const token = await revealedSecret('Secret key');
    expect(token).toMatch(TOKEN);
    const me = await callWithKey(token, '/v1/me');
    expect(me.status).toBe(200);
    expect(me.body.role).toBe('viewer');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await row.getByRole('cell', { name: '1', exact: true }).waitFor(); // one active key

    await row.getByLabel('Role of nightly sync').selectOption('editor');
    await row.getByRole('button', { name: 'Save role' }).click();
    await row.getByText('Role saved; its keys follow it now.').waitFor();
    expect((await callWithKey(token, '/v1/me')).body.role).toBe('editor');
    await d.shot('service-accounts');

    await row.getByRole('button', { name: 'Delete nightly sync' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the service account “nightly sync”?' });
    expect(await textOf(dialog)).toContain('Its 1 active key stops working at once.');
    await dialog.getByRole('button', { name: 'Delete service account' }).click();
    await page.getByText('No service accounts yet.').waitFor();
    expect((await callWithKey(token, '/v1/me')).status).toBe(401);
  });

  let webhookSecret = '';

  it('creates a webhook to a receiver on loopback, shows its secret once and pings it', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const form = page.getByRole('form', { name: 'New webhook' });
    // The API's refusal, in words, next to the field.
    await form.getByLabel('Receiver URL').fill('ftp://example.com/hook');
    await form.getByRole('button', { name: 'Create webhook' }).click();
    await form.getByRole('alert').filter({ hasText: 'The URL must use https or http.' }).waitFor();
    await form.getByLabel('Receiver URL').fill(receiverUrl);
    await form.getByRole('radio', { name: /Only the events chosen below/ }).check();
    await form.getByRole('checkbox', { name: 'record.created' }).check();
    await form.getByRole('checkbox', { name: 'record.updated' }).check();
    await d.shot('webhooks-create-form');
    await form.getByRole('button', { name: 'Create webhook' }).click();
    webhookSecret = await revealedSecret('Signing secret');
    expect(webhookSecret).toMatch(/^whsec_/);
    await d.shot('webhooks-secret-once');
    await page.getByRole('link', { name: 'Open the webhook' }).click();
    await page.getByRole('heading', { name: /Webhook/ }).first().waitFor();
    expect(await page.content()).not.toContain(webhookSecret);

    await page.getByRole('button', { name: 'Send ping' }).click();
    await page.getByText('The receiver answered 200: the ping succeeded.').waitFor();
    const ping = page.getByRole('article', { name: 'Ping result' });
    expect(await textOf(ping)).toContain('answered 200');
    // The receiver got a real, correctly signed call.
    const received = receiver.received.at(-1)!;
    expect(received.headers['x-baas-event']).toBe('webhook.ping');
    expect((await verifyWebhook(received.body, received.headers as any, webhookSecret)).type).toBe('webhook.ping');
  });

  it('logs the delivery of a new record with its attempt, filters the log, and replays it', async () => {
    const before = receiver.received.length;
    const made = await callApi(d.context.request, 'POST', '/v1/collections/leads/records', { data: { name: 'Ada' } });
    expect(made.status).toBe(201);
    await eventually(async () => receiver.received.length > before, 'the record.created delivery');
    const delivered = receiver.received.at(-1)!;
    expect((await verifyWebhook(delivered.body, delivered.headers as any, webhookSecret)).type).toBe('record.created');

    const log = page.getByRole('list', { name: 'Deliveries, newest first' });
    const item = log.getByRole('listitem').filter({ hasText: 'record.created' });
    await eventually(async () => {
      await page.getByRole('button', { name: 'Refresh', exact: true }).click();
      return (await item.filter({ hasText: 'Succeeded' }).count()) === 1;
    }, 'the succeeded delivery in the log');
    await item.getByRole('button', { name: /Show attempts/ }).click();
    const attempt = item.getByRole('article', { name: 'Attempt 1' });
    await attempt.waitFor();
    expect(await textOf(attempt)).toContain('200');
    expect(await textOf(attempt)).toContain('answered 200');
    await attempt.getByText(/Response headers/).click();
    expect(await textOf(attempt)).toContain('x-receiver');
    await d.shot('webhook-delivery-log');

    const count = receiver.received.length;
    await item.getByRole('button', { name: 'Replay' }).click();
    await item.getByText(/Sent again as a new delivery/).waitFor();
    await eventually(async () => receiver.received.length > count, 'the replayed call');
    // The replay carries the same delivery id, so a receiver can drop the duplicate.
    expect(receiver.received.at(-1)!.headers['x-baas-delivery']).toBe(delivered.headers['x-baas-delivery']);
    await eventually(async () => {
      await page.getByRole('button', { name: 'Refresh', exact: true }).click();
      return (await log.getByRole('listitem').filter({ hasText: 'Succeeded' }).count()) === 2;
    }, 'both deliveries succeeded in the log');

    await page.getByLabel('State', { exact: true }).selectOption('dead');
    await page.getByText('No delivery matches these filters.').waitFor();
    await page.getByLabel('State', { exact: true }).selectOption('succeeded');
    await eventually(async () => (await log.getByRole('listitem').count()) === 2, 'the succeeded filter');
  });

  it('changes what the webhook listens to and rotates its secret', async () => {
    await page.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Change webhook' });
    await form.getByRole('radio', { name: /All events/ }).check();
    await form.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('definition').filter({ hasText: 'All events' }).waitFor();

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
    expect(await textOf(dialog)).toContain('The current secret stops at once');
    await dialog.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = await revealedSecret('Signing secret');
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(webhookSecret);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('button', { name: 'Send ping' }).click();
    await page.getByText('The receiver answered 200: the ping succeeded.').waitFor();
    const received = receiver.received.at(-1)!;
    expect((await verifyWebhook(received.body, received.headers as any, rotated)).type).toBe('webhook.ping');
    await expect(verifyWebhook(received.body, received.headers as any, webhookSecret)).rejects.toThrow();
    webhookSecret = rotated;
  });

  it('shows a banner when the webhook was switched off automatically, until it is enabled', async () => {
    // 25 dead deliveries in a row take over two hours of retries; the state they leave is written directly.
    const webhookId = new URL(page.url()).pathname.split('/').pop()!;
    const db = new Database(path.join(d.server.dataDir, 'plainbase.db'));
    try {
      db.prepare("update webhooks set enabled = 0, disabled_reason = 'auto' where id = ?").run(webhookId);
    } finally {
      db.close();
    }
    await page.reload();
    const banner = page.getByRole('alert').filter({ hasText: 'This webhook was switched off automatically' });
    await banner.waitFor();
    expect(await textOf(banner)).toContain('held');

    // An event while it is off is held, shown as such with the body it will send, and sent on enable.
    const before = receiver.received.length;
    const made = await callApi(d.context.request, 'POST', '/v1/collections/leads/records', { data: { name: 'While off' } });
    expect(made.status).toBe(201);
    const log = page.getByRole('list', { name: 'Deliveries, newest first' });
    const held = log.getByRole('listitem').filter({ hasText: 'Held' });
    await eventually(async () => {
      await page.getByRole('button', { name: 'Refresh', exact: true }).click();
      return (await held.count()) === 1;
    }, 'the held delivery in the log');
    await held.getByRole('button', { name: /Show attempts/ }).click();
    await held.getByText('No attempt yet: held until the webhook is enabled.').waitFor();
    await held.getByText('Body sent').click();
    expect(await textOf(held)).toContain('While off');
    await d.shot('webhook-auto-disabled');
    expect(receiver.received.length).toBe(before);

    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page.getByRole('button', { name: 'Disable', exact: true }).waitFor();
    expect(await banner.count()).toBe(0);
    await eventually(async () => receiver.received.length > before, 'the held delivery, sent once enabled');
    expect(JSON.parse(receiver.received.at(-1)!.body.toString()).data.record.data).toEqual({ name: 'While off' });

    // And on a phone-sized screen.
    const narrow = await d.newContext({ narrow: true });
    await narrow.addCookies(await d.context.cookies());
    const phone = await narrow.newPage();
    await phone.goto(`/webhooks/${webhookId}`);
    await phone.getByRole('heading', { name: 'Delivery log' }).waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await d.shot('webhook-narrow', phone);
    await narrow.close();
  });
});
