import { afterEach, beforeEach, expect, it } from 'vitest';
import { purgeExpired } from '../src/modules/housekeeping/purge-expired.js';
import { LOG_RETENTION_MS } from '../src/modules/webhooks/delivery-queue.js';
import { closeSender } from '../src/delivery/guard-options.js';
import { RETRY_GAPS_SECONDS } from '../src/delivery/schedule.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { expectError, signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { Receiver } from './support/receiver.js';
import { attemptAlongSchedule } from './support/retry-schedule.js';

/**
 * The delivery log as a user works with it: nothing dropped while a webhook is off, the exact
 * body each delivery sent, replays that never double a delivery, and URL errors that say how to
 * test locally. One workspace is enough here: nothing below is shared between workspaces (the
 * sharing is in webhook-tenancy.test.ts).
 */
describeEachEngine('the delivery log', (engine) => {
  let t: TestApp;
  let owner: Client;
  let receiver: Receiver;
  let worker: DeliveryWorker;
  let url: string;
  beforeEach(async () => {
    t = await startTestApp(engine, { env: 'development', webhookAllowPrivate: true });
    owner = await signedInOwner(t);
    receiver = new Receiver();
    url = await receiver.start();
    worker = new DeliveryWorker(t.deps);
    await owner.post('/v1/collections', { name: 'leads' });
  });
  afterEach(async () => {
    await receiver.stop();
    await closeSender(t.deps);
    await t.close();
  });

  const receivedData = () => receiver.received.map((call) => JSON.parse(call.body.toString()).data.record.data);
  const deliveries = async (webhookId: string, query = '') => (await owner.get(`/v1/webhooks/${webhookId}/deliveries${query}`)).body.data;


  it('holds what happens while auto-disabled, shows it as held, and sends it when enabled again', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
    // 24 dead deliveries in a row already (set directly: 24 × 8 failing attempts add nothing here).
    await t.deps.db.updateTable('webhooks').set({ dead_streak: 24 }).where('id', '=', webhook.id).execute();
    receiver.status = 503;
    await owner.post('/v1/collections/leads/records', { data: { n: 'dies' } });
    await attemptAlongSchedule(worker, t.clock);
    expect((await owner.get(`/v1/webhooks/${webhook.id}`)).body).toMatchObject({ enabled: false, disabledReason: 'auto' });

    receiver.status = 200;
    const before = receiver.received.length;
    for (const n of [1, 2, 3]) await owner.post('/v1/collections/leads/records', { data: { n } });
    await worker.drain();
    expect(receiver.received.length).toBe(before);
    const held = await deliveries(webhook.id, '?state=pending');
    expect(held).toHaveLength(3);
    for (const delivery of held) expect(delivery).toMatchObject({ held: true, attemptCount: 0, nextAttemptAt: null });

    expect((await owner.post(`/v1/webhooks/${webhook.id}/enable`)).status).toBe(200);
    await worker.drain();
    // Sent side by side, so in any order (docs/webhooks.md, "Order").
    expect(receivedData().slice(before).map(({ n }) => n).sort()).toEqual([1, 2, 3]);
    expect(await deliveries(webhook.id, '?state=pending')).toEqual([]);
  });

  it('keeps held deliveries for the 30 days logs are kept, then drops them with their events', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
    await owner.post(`/v1/webhooks/${webhook.id}/disable`);
    await owner.post('/v1/collections/leads/records', { data: { n: 'old' } });
    await worker.drain();
    t.clock.advance(LOG_RETENTION_MS - 1000);
    await purgeExpired(t.deps);
    expect(await t.deps.db.selectFrom('deliveries').select('id').where('webhook_id', '=', webhook.id).execute()).toHaveLength(1);
    t.clock.advance(2000);
    await purgeExpired(t.deps);
    // (The session has expired by now: look in the tables.)
    expect(await t.deps.db.selectFrom('deliveries').select('id').where('webhook_id', '=', webhook.id).execute()).toEqual([]);
    expect(await t.deps.db.selectFrom('events').select('id').execute()).toEqual([]);
  });

  it('shows the exact body a delivery sent, byte for byte', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
    await owner.post('/v1/collections/leads/records', { data: { name: 'Zoë', note: 'line\u2028break "quoted"' } });
    await worker.drain();
    const [delivery] = await deliveries(webhook.id);
    const detail = (await owner.get(`/v1/webhooks/${webhook.id}/deliveries/${delivery.id}`)).body;
    expect(detail.body).toBe(receiver.received[0]!.body.toString('utf8'));
    expect(JSON.parse(detail.body)).toMatchObject({ id: delivery.eventId, type: 'record.created', data: { record: { data: { name: 'Zoë' } } } });
  });

  it('replaying a delivery still waiting for its retry brings the retry forward instead of sending twice', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
    receiver.status = 503;
    await owner.post('/v1/collections/leads/records', { data: { n: 1 } });
    await worker.drain();
    const [waiting] = await deliveries(webhook.id);
    expect(waiting).toMatchObject({ state: 'pending', attemptCount: 1, held: false });
    expect(Date.parse(waiting.nextAttemptAt)).toBe(t.clock.now().getTime() + RETRY_GAPS_SECONDS[0]! * 1000);

    receiver.status = 200;
    const replay = await owner.post(`/v1/webhooks/${webhook.id}/deliveries/${waiting.id}/replay`);
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ id: waiting.id, state: 'pending', attemptCount: 1, nextAttemptAt: t.clock.now().toISOString() });
    // Replayed twice while waiting: still one delivery.
    expect((await owner.post(`/v1/webhooks/${webhook.id}/deliveries/${waiting.id}/replay`)).status).toBe(200);
    await worker.drain();
    expect(receiver.received).toHaveLength(2);
    expect(await deliveries(webhook.id)).toMatchObject([{ id: waiting.id, state: 'succeeded', attemptCount: 2 }]);

    // A finished delivery, replayed, is a new delivery of the same event.
    const again = await owner.post(`/v1/webhooks/${webhook.id}/deliveries/${waiting.id}/replay`);
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(waiting.id);
    await worker.drain();
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((call) => call.headers['x-baas-delivery'])).size).toBe(1);
  });
});

describeEachEngine('webhook URL errors', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeEach(async () => {
    // Production mode, as deployed: https only, public addresses only.
    t = await startTestApp(engine, {});
    t.deps.resolveHost = async (name) => (name === 'hooks.example.com' ? ['93.184.216.34'] : []);
    owner = await signedInOwner(t);
  });
  afterEach(async () => {
    await closeSender(t.deps);
    await t.close();
  });

  it('name the rule and say how to test against a receiver on your own machine', async () => {
    const http = expectError(await owner.post('/v1/webhooks', { url: 'http://hooks.example.com/x', events: ['*'] }), 400, 'INVALID_WEBHOOK_URL');
    expect(http.details).toMatchObject({ reason: 'scheme' });
    expect(http.message).toMatch(/https/);
    expect(http.message).toContain('PLAINBASE_ENV=development');
    for (const [target, reason] of [['https://localhost:3000/hook', 'internal-hostname'], ['https://192.168.1.20/hook', 'private-address']] as const) {
      const error = expectError(await owner.post('/v1/webhooks', { url: target, events: ['*'] }), 400, 'INVALID_WEBHOOK_URL');
      expect(error.details).toMatchObject({ reason });
      expect(error.message).toContain('PLAINBASE_WEBHOOK_ALLOW_PRIVATE=1');
      expect(error.message).toContain('docs/webhooks.md');
    }
  });

  it('judge IPv6 forms that carry an IPv4 address by that address, on create and on update', async () => {
    const carried = ['https://[::127.0.0.1]/', 'https://[::a9fe:a9fe]/', 'https://[::10.0.0.1]/', 'https://[::ffff:10.0.0.1]/', 'https://[64:ff9b::7f00:1]/', 'https://[2002:a9fe:a9fe::]/'];
    for (const target of carried) {
      const error = expectError(await owner.post('/v1/webhooks', { url: target, events: ['*'] }), 400, 'INVALID_WEBHOOK_URL');
      expect(error.details, target).toMatchObject({ reason: 'private-address' });
    }
    const { body: webhook } = await owner.post('/v1/webhooks', { url: 'https://hooks.example.com/x', events: ['*'] });
    for (const target of carried) {
      expectError(await owner.patch(`/v1/webhooks/${webhook.id}`, { url: target }), 400, 'INVALID_WEBHOOK_URL');
    }
    expect((await owner.get(`/v1/webhooks/${webhook.id}`)).body.url).toBe('https://hooks.example.com/x');
  });
});
