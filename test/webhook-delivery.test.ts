import { afterEach, beforeEach, expect, it } from 'vitest';
import { closeSender } from '../src/delivery/guard-options.js';
import { MAX_ATTEMPTS, RETRY_GAPS_SECONDS } from '../src/delivery/schedule.js';
import { signPayload } from '../src/delivery/sign.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { Receiver } from './support/receiver.js';
import { attemptAlongSchedule } from './support/retry-schedule.js';

describeEachEngine('webhook delivery', (engine) => {
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

  it('delivers a record event signed over the exact bytes, with the documented headers', async () => {
    const created = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    const { body: record } = await owner.post('/v1/collections/leads/records', { data: { name: 'Ada' } });
    await worker.drain();

    expect(receiver.received).toHaveLength(1);
    const [call] = receiver.received;
    const message = JSON.parse(call!.body.toString('utf8'));
    expect(message).toMatchObject({ type: 'record.created', workspaceId: owner.workspaceId, collectionId: record.collectionId, data: { record: { id: record.id, data: { name: 'Ada' } } } });
    expect(call!.headers['content-type']).toBe('application/json');
    expect(call!.headers['x-baas-event']).toBe('record.created');
    expect(call!.headers['x-baas-delivery']).toBe(message.id);
    expect(call!.headers['x-baas-webhook-id']).toBe(created.body.id);
    const timestamp = String(call!.headers['x-baas-timestamp']);
    expect(Number(timestamp)).toBe(Math.floor(t.clock.now().getTime() / 1000));
    expect(call!.headers['x-baas-signature']).toBe(signPayload(created.body.secret, timestamp, call!.body));

    const deliveries = await owner.get(`/v1/webhooks/${created.body.id}/deliveries`);
    expect(deliveries.body.data).toHaveLength(1);
    expect(deliveries.body.data[0]).toMatchObject({ state: 'succeeded', attemptCount: 1, eventType: 'record.created' });
    const detail = await owner.get(`/v1/webhooks/${created.body.id}/deliveries/${deliveries.body.data[0].id}`);
    expect(detail.body.attempts[0]).toMatchObject({ status: 200, responseBody: 'answered 200', error: null });
  });

  it('retries on the schedule with the same x-baas-delivery, then dies after 8 attempts', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['*'] });
    receiver.status = 503;
    await owner.post('/v1/collections/leads/records', { data: {} });
    await worker.drain();
    expect(receiver.received).toHaveLength(1);
    for (const gap of RETRY_GAPS_SECONDS) {
      t.clock.advance(gap * 1000 - 1);
      await worker.drain();
      const before = receiver.received.length;
      t.clock.advance(1);
      await worker.drain();
      expect(receiver.received.length).toBe(before + 1);
    }
    expect(receiver.received).toHaveLength(MAX_ATTEMPTS);
    expect(new Set(receiver.received.map((r) => r.headers['x-baas-delivery'])).size).toBe(1);
    const list = await owner.get(`/v1/webhooks/${webhook.id}/deliveries?state=dead`);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0].attemptCount).toBe(8);

    // Fixed, then replayed: a new delivery of the same event succeeds.
    receiver.status = 200;
    const replay = await owner.post(`/v1/webhooks/${webhook.id}/deliveries/${list.body.data[0].id}/replay`);
    expect(replay.status).toBe(201);
    await worker.drain();
    expect(receiver.received.at(-1)!.headers['x-baas-delivery']).toBe(receiver.received[0]!.headers['x-baas-delivery']);
    expect((await owner.get(`/v1/webhooks/${webhook.id}/deliveries/${replay.body.id}`)).body.state).toBe('succeeded');
  });

  it('switches a webhook off after 25 dead deliveries in a row and writes the audit entry', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
    receiver.status = 500;
    for (let i = 0; i < 25; i++) await owner.post('/v1/collections/leads/records', { data: { i } });
    await attemptAlongSchedule(worker, t.clock);
    const after = await owner.get(`/v1/webhooks/${webhook.id}`);
    expect(after.body).toMatchObject({ enabled: false, disabledReason: 'auto' });
    const audit = await owner.get('/v1/audit-log?action=webhook.auto_disabled');
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0].actor.type).toBe('system');

    // Re-enabled: the counter starts again from zero.
    const enabled = await owner.post(`/v1/webhooks/${webhook.id}/enable`);
    expect(enabled.body).toMatchObject({ enabled: true, disabledReason: null });
  });

  it('refuses a private target unless allowed, at save and at every attempt', async () => {
    const strict = await startTestApp(engine, { env: 'development' });
    const strictOwner = await signedInOwner(strict);
    // By name (the receiver's own URL), and by the address that name resolves to.
    const refused = await strictOwner.post('/v1/webhooks', { url, events: ['*'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_WEBHOOK_URL', details: { reason: 'internal-hostname' } });
    const byAddress = await strictOwner.post('/v1/webhooks', { url: url.replace('localhost', '127.0.0.1'), events: ['*'] });
    expect(byAddress.body.error).toMatchObject({ code: 'INVALID_WEBHOOK_URL', details: { reason: 'private-address' } });
    await strict.close();
  });
});
