import { afterEach, beforeEach, expect, it } from 'vitest';
import { purgeExpired } from '../src/modules/housekeeping/purge-expired.js';
import { closeSender } from '../src/delivery/guard-options.js';
import { signPayload } from '../src/delivery/sign.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { addMember, signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { Receiver } from './support/receiver.js';

describeEachEngine('webhook management', (engine) => {
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

  it('validates what is saved and never shows the secret again', async () => {
    expect((await owner.post('/v1/webhooks', { url, events: ['record.exploded'] })).status).toBe(400);
    expect((await owner.post('/v1/webhooks', { url, events: ['*', 'record.created'] })).status).toBe(400);
    expect((await owner.post('/v1/webhooks', { url, events: [] })).status).toBe(400);
    expect((await owner.post('/v1/webhooks', { url, events: ['*'], collections: ['nope'] })).status).toBe(400);
    const bad = await owner.post('/v1/webhooks', { url: 'ftp://example.com/', events: ['*'] });
    expect(bad.body.error).toMatchObject({ code: 'INVALID_WEBHOOK_URL', details: { reason: 'scheme' } });

    const created = await owner.post('/v1/webhooks', { url, events: ['record.created'], collections: ['leads'] });
    expect(created.status).toBe(201);
    const list = await owner.get('/v1/webhooks');
    const read = await owner.get(`/v1/webhooks/${created.body.id}`);
    expect(JSON.stringify([list.body, read.body])).not.toContain(created.body.secret);
    expect(read.body).toMatchObject({ url, events: ['record.created'], collections: [expect.stringMatching(/^col_/)], enabled: true, disabledReason: null });

    const patched = await owner.patch(`/v1/webhooks/${created.body.id}`, { events: ['*'], collections: null });
    expect(patched.body).toMatchObject({ events: ['*'], collections: null });
    const editor = await addMember(t, owner, 'editor@example.com', 'editor');
    expect((await editor.get('/v1/webhooks')).status).toBe(403);
    expect((await owner.delete(`/v1/webhooks/${created.body.id}`)).status).toBe(204);
    expect((await owner.get(`/v1/webhooks/${created.body.id}`)).status).toBe(404);
    const actions = (await owner.get('/v1/audit-log?action=webhook.*')).body.data.map((entry: any) => entry.action);
    expect(actions).toEqual(['webhook.deleted', 'webhook.updated', 'webhook.created']);
  });

  it('pings once and answers the result; pings are not logged as deliveries', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['*'] });
    const ping = await owner.post(`/v1/webhooks/${webhook.id}/ping`);
    expect(ping.status).toBe(200);
    expect(ping.body).toMatchObject({ ok: true, status: 200, responseBody: 'answered 200', error: null });
    expect(receiver.received).toHaveLength(1);
    const [call] = receiver.received;
    expect(call!.headers['x-baas-event']).toBe('webhook.ping');
    expect(JSON.parse(call!.body.toString())).toMatchObject({ type: 'webhook.ping', collectionId: null, data: { webhook: { id: webhook.id } } });
    receiver.status = 500;
    expect((await owner.post(`/v1/webhooks/${webhook.id}/ping`)).body).toMatchObject({ ok: false, status: 500 });
    expect((await owner.get(`/v1/webhooks/${webhook.id}/deliveries`)).body.data).toEqual([]);
  });

  it('a rotated secret signs from the next attempt on, with no overlap', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
    const worker = new DeliveryWorker(t.deps);
    receiver.status = 500;
    await owner.post('/v1/collections/leads/records', { data: {} });
    await worker.drain();
    const rotated = await owner.post(`/v1/webhooks/${webhook.id}/rotate-secret`);
    expect(rotated.body.secret).not.toBe(webhook.secret);
    receiver.status = 200;
    t.clock.advance(15_000);
    await worker.drain();
    const [first, second] = receiver.received;
    const signatureOf = (secret: string, call: typeof first) => signPayload(secret, String(call!.headers['x-baas-timestamp']), call!.body);
    expect(first!.headers['x-baas-signature']).toBe(signatureOf(webhook.secret, first));
    expect(second!.headers['x-baas-signature']).toBe(signatureOf(rotated.body.secret, second));
    expect(second!.headers['x-baas-signature']).not.toBe(signatureOf(webhook.secret, second));
  });

  it('a disabled webhook gets nothing until enabled, then what it held; watched collections and events filter', async () => {
    await owner.post('/v1/collections', { name: 'other' });
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'], collections: ['leads'] });
    const worker = new DeliveryWorker(t.deps);
    await owner.post(`/v1/webhooks/${webhook.id}/disable`);
    expect((await owner.get(`/v1/webhooks/${webhook.id}`)).body).toMatchObject({ enabled: false, disabledReason: 'manual' });
    await owner.post('/v1/collections/leads/records', { data: { a: 1 } });
    await worker.drain();
    expect(receiver.received).toHaveLength(0);
    // Held, not lost: the log shows it waiting for the webhook.
    expect((await owner.get(`/v1/webhooks/${webhook.id}/deliveries`)).body.data).toMatchObject([{ state: 'pending', held: true, attemptCount: 0, nextAttemptAt: null }]);
    await owner.post(`/v1/webhooks/${webhook.id}/enable`);
    await owner.post('/v1/collections/leads/records', { data: { a: 2 } });
    await owner.post('/v1/collections/other/records', { data: { a: 3 } });
    await owner.patch('/v1/collections/leads', { public: true });
    await worker.drain();
    // Sent side by side, so in any order.
    expect(receiver.received.map((call) => JSON.parse(call.body.toString()).data.record.data.a).sort()).toEqual([1, 2]);
    expect((await owner.get(`/v1/webhooks/${webhook.id}/deliveries`)).body.data).toMatchObject([
      { state: 'succeeded', held: false },
      { state: 'succeeded', held: false },
    ]);
  });

  it('an attempt to a blocked destination fails before any socket opens, with one generic reason', async () => {
    const strict = await startTestApp(engine, { env: 'development', webhookAllowPrivate: false });
    try {
      // Saved while the name resolved to a public address; at delivery it resolves to loopback.
      const answers = ['93.184.216.34'];
      strict.deps.resolveHost = async () => answers;
      const strictOwner = await signedInOwner(strict);
      await strictOwner.post('/v1/collections', { name: 'leads' });
      const port = new URL(url).port;
      const saved = await strictOwner.post('/v1/webhooks', { url: `http://rebind.example.com:${port}/hooks`, events: ['*'] });
      expect(saved.status, JSON.stringify(saved.body)).toBe(201);
      const webhook = saved.body;
      answers[0] = '127.0.0.1';
      await strictOwner.post('/v1/collections/leads/records', { data: {} });
      await new DeliveryWorker(strict.deps).drain();
      expect(receiver.received).toHaveLength(0);
      const [delivery] = (await strictOwner.get(`/v1/webhooks/${webhook.id}/deliveries`)).body.data;
      const detail = await strictOwner.get(`/v1/webhooks/${webhook.id}/deliveries/${delivery.id}`);
      expect(detail.body.attempts[0]).toMatchObject({ status: null, error: 'destination not allowed' });
    } finally {
      await closeSender(strict.deps);
      await strict.close();
    }
  });

  it('purges attempt logs and finished deliveries after 30 days', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
    await owner.post('/v1/collections/leads/records', { data: {} });
    await new DeliveryWorker(t.deps).drain();
    await purgeExpired(t.deps);
    expect((await owner.get(`/v1/webhooks/${webhook.id}/deliveries`)).body.data).toHaveLength(1);
    t.clock.advance(30 * 24 * 3600 * 1000 + 1000);
    await purgeExpired(t.deps);
    // (The session has expired by now: look in the tables.)
    expect(await t.deps.db.selectFrom('deliveries').selectAll().where('webhook_id', '=', webhook.id).execute()).toEqual([]);
    expect(await t.deps.db.selectFrom('delivery_attempts').selectAll().execute()).toEqual([]);
  });
});
