import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { claimDueDeliveries, fanOutEvents, recordAttempts, type DueDelivery, type FinishedAttempt } from '../src/modules/webhooks/delivery-queue.js';
import { closeSender } from '../src/delivery/guard-options.js';
import { MAX_ATTEMPTS } from '../src/delivery/schedule.js';
import type { AttemptResult } from '../src/delivery/send.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { Receiver } from './support/receiver.js';

/**
 * The worker logs the attempts that finished together, in one transaction (group commit). Logged
 * together, they must count exactly as they would one by one: per webhook in order for the
 * dead-in-a-row counter, and one attempt that cannot be logged must not cost the others their log.
 */
describeEachEngine('webhook attempts logged together', (engine) => {
  let t: TestApp;
  let owner: Client;
  let receiver: Receiver;
  let url: string;
  beforeEach(async () => {
    t = await startTestApp(engine, { env: 'development', webhookAllowPrivate: true });
    owner = await signedInOwner(t);
    receiver = new Receiver();
    url = await receiver.start();
    await owner.post('/v1/collections', { name: 'leads' });
  });
  afterEach(async () => {
    await receiver.stop();
    await closeSender(t.deps);
    await t.close();
  });

  const answered = (ok: boolean): AttemptResult => ({
    ok, status: ok ? 200 : 500, durationMs: 1, responseHeaders: {}, responseBody: '', error: ok ? null : 'HTTP 500',
  });
  /** `count` deliveries to the webhook, claimed as a worker would, each on its last attempt. */
  async function lastAttempts(count: number): Promise<DueDelivery[]> {
    for (let i = 0; i < count; i++) await owner.post('/v1/collections/leads/records', { data: { i } });
    await fanOutEvents(t.deps, 100);
    const due = await claimDueDeliveries(t.deps, { limit: count, leaseMs: 60_000, perWebhook: count, perWorkspace: count, inFlight: new Map(), inFlightByWorkspace: new Map() });
    expect(due).toHaveLength(count);
    return due.map((delivery) => ({ ...delivery, attemptCount: MAX_ATTEMPTS - 1 }));
  }
  const finished = (delivery: DueDelivery, ok: boolean): FinishedAttempt => ({ delivery, result: answered(ok), attemptedAt: t.clock.now() });
  const webhookRow = (id: string) => t.deps.db.selectFrom('webhooks').select(['dead_streak', 'enabled']).where('id', '=', id).executeTakeFirstOrThrow();

  it('counts dead deliveries in a row per webhook in the order they finished', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
    await t.deps.db.updateTable('webhooks').set({ dead_streak: 23 }).where('id', '=', webhook.id).execute();
    const [a, b, c] = await lastAttempts(3);
    // 23 dead in a row, then dead (24), a success (0), dead (1): never 25, so the webhook stays on.
    await recordAttempts(t.deps, [finished(a!, false), finished(b!, true), finished(c!, false)]);
    expect(await webhookRow(webhook.id)).toMatchObject({ dead_streak: 1, enabled: 1 });
    const states = await t.deps.db.selectFrom('deliveries').select(['id', 'state', 'attempt_count']).orderBy('id').execute();
    expect(states).toEqual([
      { id: a!.id, state: 'dead', attempt_count: MAX_ATTEMPTS },
      { id: b!.id, state: 'succeeded', attempt_count: MAX_ATTEMPTS },
      { id: c!.id, state: 'dead', attempt_count: MAX_ATTEMPTS },
    ]);
    expect(await t.deps.db.selectFrom('delivery_attempts').select('delivery_id').execute()).toHaveLength(3);
  });

  it('switches the webhook off at the 25th dead delivery in a row within one batch, with one audit entry', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
    await t.deps.db.updateTable('webhooks').set({ dead_streak: 23 }).where('id', '=', webhook.id).execute();
    const [a, b, c] = await lastAttempts(3);
    // 24, 25 (off), then a success clears the counter but does not switch the webhook back on.
    await recordAttempts(t.deps, [finished(a!, false), finished(b!, false), finished(c!, true)]);
    expect(await webhookRow(webhook.id)).toMatchObject({ dead_streak: 0, enabled: 0 });
    const audit = await owner.get('/v1/audit-log?action=webhook.auto_disabled');
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0].details).toEqual({ deadInARow: 25 });
  });

  it('logs the other attempts when one delivery was deleted with its webhook during its call', async () => {
    // The second receiver deletes its own webhook while it is being called.
    let doomedId = '';
    const doomed: Server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        void owner.delete(`/v1/webhooks/${doomedId}`).then(() => response.end('ok'));
      });
    });
    await new Promise<void>((resolve) => doomed.listen(0, '127.0.0.1', resolve));
    try {
      const { body: kept } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
      const created = await owner.post('/v1/webhooks', { url: `http://localhost:${(doomed.address() as AddressInfo).port}/`, events: ['record.created'] });
      doomedId = created.body.id;
      const warnings: string[] = [];
      const worker = new DeliveryWorker(t.deps, { log: { warn: (_details, message) => warnings.push(message) } });
      await owner.post('/v1/collections/leads/records', { data: {} });
      await worker.drain();

      expect(receiver.received).toHaveLength(1);
      expect(warnings).toEqual(['delivery worker: could not record an attempt; it will be attempted again']);
      const deliveries = await owner.get(`/v1/webhooks/${kept.id}/deliveries`);
      expect(deliveries.body.data).toMatchObject([{ state: 'succeeded', attemptCount: 1 }]);
      // Logged, the kept webhook's delivery is not attempted again, even after its claim ran out.
      t.clock.advance(120_000);
      await worker.drain();
      expect(receiver.received).toHaveLength(1);
    } finally {
      doomed.closeAllConnections();
      await new Promise<void>((resolve) => doomed.close(() => resolve()));
    }
  });
});
