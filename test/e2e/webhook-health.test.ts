import Database from 'better-sqlite3';
import path from 'node:path';
import type { APIRequestContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyWebhook } from '../../sdk/src/verify-webhook.js';
import { Receiver } from '../support/receiver.js';
import { startDashboard, type Dashboard } from './support/dashboard.js';

/**
 * A webhook's health in a real browser against the real service and a real receiver on loopback
 * (by host name) that answers 404: the list and the page say "Retrying: 3 failed, last 404, …",
 * not "On"; the delivery reads "Retrying (3 failed, last 404)", not "Pending"; the 24-hour chart
 * carries its numbers; once the delivery gave up, "Retry all failed since" counts it first and
 * sends it again, signed, on confirm.
 */
describe.skipIf(!inject('chromiumPresent'))('dashboard: webhook health', () => {
  let d: Dashboard;
  let page: Page;
  let receiver: Receiver;
  let receiverUrl: string;

  const callApi = async (request: APIRequestContext, method: 'GET' | 'POST', url: string, data?: unknown) => {
    const response = await request.fetch(url, { method, data, headers: { 'x-baas-workspace': d.owner.workspaceId } });
    return { status: response.status(), body: (await response.json().catch(() => null)) as any };
  };

  const eventually = async <T>(check: () => Promise<T | undefined | false>, what: string, withinMs = 10_000): Promise<T> => {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const result = await check();
      if (result) return result;
      if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  const textOf = async (locator: Locator) => (await locator.textContent())?.replace(/\s+/g, ' ').trim() ?? '';

  beforeAll(async () => {
    receiver = new Receiver();
    receiverUrl = await receiver.start();
    d = await startDashboard({ env: { PLAINBASE_WEBHOOK_ALLOW_PRIVATE: '1' } });
    page = d.page;
    expect((await callApi(d.context.request, 'POST', '/v1/collections', { name: 'leads' })).status).toBe(201);
  }, 30_000);
  afterAll(async () => {
    await d?.stop();
    await receiver?.stop();
  });

  it('shows what happens to a failing receiver\'s calls, and retries what gave up after counting it', async () => {
    expect(receiverUrl).toMatch(/^http:\/\/localhost:/);
    receiver.status = 404;
    const created = await callApi(d.context.request, 'POST', '/v1/webhooks', { url: receiverUrl, events: ['record.created'] });
    expect(created.status).toBe(201);
    const { id: webhookId, secret } = created.body;
    expect((await callApi(d.context.request, 'POST', '/v1/collections/leads/records', { data: { name: 'Ada' } })).status).toBe(201);
    await eventually(async () => receiver.received.length === 1, 'the first attempt');
    // Two more real attempts, each brought forward by a replay instead of waiting for the schedule.
    for (const attempts of [2, 3]) {
      const [delivery] = await eventually(async () => {
        const log = (await callApi(d.context.request, 'GET', `/v1/webhooks/${webhookId}/deliveries`)).body.data;
        return log[0]?.attemptCount === attempts - 1 && log;
      }, `attempt ${attempts - 1} in the log`);
      expect((await callApi(d.context.request, 'POST', `/v1/webhooks/${webhookId}/deliveries/${delivery.id}/replay`)).status).toBe(200);
      await eventually(async () => receiver.received.length === attempts, `attempt ${attempts}`);
    }
    await eventually(async () => (await callApi(d.context.request, 'GET', `/v1/webhooks/${webhookId}/health`)).body.failureStreak === 3, 'the third failure logged');

    await page.goto('/webhooks');
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: receiverUrl }) });
    await row.waitFor();
    expect(await textOf(row)).toMatch(/Retrying: 3 failed, last 404, next (in \d+ s|in 1 min|now)/);
    expect(await textOf(row)).not.toMatch(/\bOn\b/);
    await d.shot('webhooks-list-health');

    await row.getByRole('link', { name: receiverUrl }).click();
    const health = page.getByRole('region', { name: 'Health' });
    await health.waitFor();
    expect(await textOf(health)).toMatch(/Retrying: 3 failed, last 404/);
    expect(await textOf(health)).toMatch(/Last attempt\s*404 at/);
    expect(await textOf(health)).toContain('3 failed attempts in a row');
    const chart = health.getByRole('img', { name: 'Attempts in the last 24 hours: 0 succeeded, 3 failed.' });
    await chart.waitFor();
    expect(await chart.locator('rect.bar-failed').count()).toBeGreaterThan(0);
    const log = page.getByRole('list', { name: 'Deliveries, newest first' });
    const delivery = log.getByRole('listitem').filter({ hasText: 'record.created' });
    expect(await textOf(delivery)).toContain('Retrying (3 failed, last 404)');
    expect(await textOf(delivery)).not.toContain('Pending');
    await d.shot('webhook-health-retrying');

    // Giving up takes over two hours of retries; the state it leaves is written directly.
    const db = new Database(path.join(d.server.dataDir, 'plainbase.db'));
    try {
      db.prepare("update deliveries set state = 'dead', next_attempt_at = null, locked_until = null where webhook_id = ?").run(webhookId);
      db.prepare('update webhooks set dead_streak = 1 where id = ?').run(webhookId);
    } finally {
      db.close();
    }
    await page.reload();
    await health.waitFor();
    await health.getByText(/^Failing since/).waitFor();

    receiver.status = 200;
    const retry = page.getByRole('region', { name: 'Retry all failed since …' });
    await retry.getByRole('button', { name: 'Count failed deliveries' }).click();
    await retry.getByText('1 failed delivery since then, not sent again yet.').waitFor();
    // Counting sent nothing.
    expect(receiver.received).toHaveLength(3);
    await d.shot('webhook-retry-failed-count');
    await retry.getByRole('button', { name: 'Retry 1 failed delivery' }).click();
    await retry.getByText('1 failed delivery queued again.').waitFor();
    await eventually(async () => receiver.received.length === 4, 'the retried call');
    const call = receiver.received[3]!;
    expect((await verifyWebhook(call.body, call.headers as any, secret)).data).toMatchObject({ record: { data: { name: 'Ada' } } });
    await eventually(async () => {
      await page.reload();
      await health.waitFor();
      return (await health.getByText('Healthy', { exact: true }).count()) === 1;
    }, 'the webhook healthy again');
    await health.getByRole('img', { name: 'Attempts in the last 24 hours: 1 succeeded, 3 failed.' }).waitFor();
  }, 90_000);
});
