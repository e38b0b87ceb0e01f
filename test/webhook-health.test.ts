import { afterEach, beforeEach, expect, it } from 'vitest';
import { closeSender } from '../src/delivery/guard-options.js';
import { RETRY_GAPS_SECONDS } from '../src/delivery/schedule.js';
import { signPayload } from '../src/delivery/sign.js';
import { STREAK_WINDOW } from '../src/modules/webhooks/webhook-health.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { addMember, expectError, inNewWorkspace, signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { Receiver } from './support/receiver.js';
import { attemptAlongSchedule } from './support/retry-schedule.js';

/**
 * A webhook's health and "retry all failed since", as a user meets them (docs/webhooks.md,
 * "Health" and "Sending failed deliveries again"): a receiver on loopback, reached by its host
 * name, that answers 404 and later 200; a second workspace beside it that nothing touches.
 */
describeEachEngine('webhook health and retry-failed', (engine) => {
  let t: TestApp;
  let owner: Client;
  let neighbour: Client;
  let receiver: Receiver;
  let worker: DeliveryWorker;
  let url: string;
  beforeEach(async () => {
    t = await startTestApp(engine, { env: 'development', webhookAllowPrivate: true });
    owner = await signedInOwner(t);
    neighbour = await inNewWorkspace(t, owner, 'Neighbour');
    receiver = new Receiver();
    url = await receiver.start();
    expect(url).toMatch(/^http:\/\/localhost:\d+\//);
    worker = new DeliveryWorker(t.deps);
    for (const client of [owner, neighbour]) await client.post('/v1/collections', { name: 'leads' });
  });
  afterEach(async () => {
    await receiver.stop();
    await closeSender(t.deps);
    await t.close();
  });


  it('names the state by what happens, counts the streak and the hours, and retries what died, once', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
    const { body: theirs } = await neighbour.post('/v1/webhooks', { url, events: ['record.created'] });
    const health = async () => (await owner.get(`/v1/webhooks/${webhook.id}/health`)).body;
    expect(await health()).toMatchObject({ state: 'new', lastAttemptAt: null, failureStreak: 0, nextAttemptAt: null });

    // 404 three times: retrying, not "on", with the next attempt's time.
    receiver.status = 404;
    await owner.post('/v1/collections/leads/records', { data: { n: 1 } });
    await worker.drain();
    for (const gap of RETRY_GAPS_SECONDS.slice(0, 2)) {
      t.clock.advance(gap * 1000);
      await worker.drain();
    }
    const retrying = await health();
    expect(retrying).toMatchObject({
      state: 'retrying', lastStatus: 404, lastError: 'HTTP 404', failureStreak: 3, waitingRetries: 1,
      lastAttemptAt: t.clock.now().toISOString(),
      nextAttemptAt: new Date(t.clock.now().getTime() + RETRY_GAPS_SECONDS[2]! * 1000).toISOString(),
    });
    // The delivery itself says how its attempts went, not just "pending".
    expect((await owner.get(`/v1/webhooks/${webhook.id}/deliveries`)).body.data).toMatchObject([{ state: 'pending', attemptCount: 3, lastStatus: 404, lastError: 'HTTP 404' }]);
    // The list carries the same summary, so a list page needs no call per webhook.
    const listed = (await owner.get('/v1/webhooks')).body.data;
    expect(listed).toEqual([expect.objectContaining({ id: webhook.id, health: expect.objectContaining({ state: 'retrying', failureStreak: 3, lastStatus: 404 }) })]);
    expect((await owner.get(`/v1/webhooks/${webhook.id}`)).body.health).toEqual(listed[0].health);

    // The rest of its schedule: dead, so failing since the first failure.
    for (const gap of RETRY_GAPS_SECONDS.slice(2)) {
      t.clock.advance(gap * 1000);
      await worker.drain();
    }
    const failing = await health();
    expect(failing).toMatchObject({ state: 'failing', failureStreak: 8, failingSince: retrying.failingSince, waitingRetries: 0, nextAttemptAt: null });
    // 24 hours, oldest first, the last the current hour; 8 failures within them, no success.
    expect(failing.hours).toHaveLength(24);
    expect(Date.parse(failing.hours[23].hour)).toBe(Math.floor(t.clock.now().getTime() / 3_600_000) * 3_600_000);
    expect(failing.hours.reduce((sum: number, hour: any) => sum + hour.failed, 0)).toBe(8);
    expect(failing.hours.reduce((sum: number, hour: any) => sum + hour.succeeded, 0)).toBe(0);
    // The neighbour's webhook heard nothing (its workspace wrote nothing), and still has no health.
    expect((await neighbour.get(`/v1/webhooks/${theirs.id}/health`)).body).toMatchObject({ state: 'new', failureStreak: 0 });
    // The neighbour has a dead delivery too, older than the owner's: it must stay as it is.
    await neighbour.post('/v1/collections/leads/records', { data: { theirs: true } });
    await attemptAlongSchedule(worker, t.clock);
    const theirDead = (await neighbour.get(`/v1/webhooks/${theirs.id}/deliveries`)).body.data;
    expect(theirDead).toMatchObject([{ state: 'dead' }]);

    // Count first, then retry: one new delivery of the same event, signed with the secret.
    const since = retrying.failingSince;
    const dry = await owner.post(`/v1/webhooks/${webhook.id}/retry-failed`, { since, dryRun: true });
    expect(dry.body).toEqual({ matched: 1, retried: 0, dryRun: true });
    receiver.status = 200;
    const before = receiver.received.length;
    // Two calls at once, and one more after: the delivery is queued again once.
    const both = await Promise.all([0, 1].map(() => owner.post(`/v1/webhooks/${webhook.id}/retry-failed`, { since })));
    expect(both.map((answer) => answer.body).sort((a, b) => b.retried - a.retried)).toEqual([{ matched: 1, retried: 1, dryRun: false }, { matched: 0, retried: 0, dryRun: false }]);
    expect((await owner.post(`/v1/webhooks/${webhook.id}/retry-failed`, { since })).body).toEqual({ matched: 0, retried: 0, dryRun: false });
    await worker.drain();
    const calls = receiver.received.slice(before);
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call!.headers['x-baas-webhook-id']).toBe(webhook.id);
    expect(JSON.parse(call!.body.toString()).data.record.data).toEqual({ n: 1 });
    expect(call!.headers['x-baas-signature']).toBe(signPayload(webhook.secret, String(call!.headers['x-baas-timestamp']), call!.body));
    const healthy = await health();
    expect(healthy).toMatchObject({ state: 'healthy', lastStatus: 200, failureStreak: 0, failingSince: null });
    expect(healthy.hours.reduce((sum: number, hour: any) => sum + hour.succeeded, 0)).toBe(1);
    expect((await owner.get(`/v1/audit-log?action=webhook.failed_retried`)).body.data).toMatchObject([{ details: { matched: 1, retried: 1 } }]);

    // The neighbour's dead delivery is still dead and was not sent again; its id is not ours to retry.
    expect((await neighbour.get(`/v1/webhooks/${theirs.id}/deliveries`)).body.data).toEqual(theirDead);
    expect(receiver.received.slice(before).filter((received) => received.headers['x-baas-webhook-id'] === theirs.id)).toEqual([]);
    expectError(await owner.post(`/v1/webhooks/${theirs.id}/retry-failed`, { since, dryRun: true }), 404, 'NOT_FOUND');
    expectError(await owner.get(`/v1/webhooks/${theirs.id}/health`), 404, 'NOT_FOUND');
    expect((await neighbour.post(`/v1/webhooks/${theirs.id}/retry-failed`, { since: '2020-01-01T00:00:00Z', dryRun: true })).body).toMatchObject({ matched: 1 });
  });

  it('counts a streak longer than its window as the window, from the oldest attempt it read, and the list says the same', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
    receiver.status = 404;
    await owner.post('/v1/collections/leads/records', { data: { n: 1 } });
    await worker.drain();
    const [attempt] = await t.deps.db.selectFrom('delivery_attempts').selectAll().where('webhook_id', '=', webhook.id).execute();
    // The log a long outage leaves (written directly: 10,000 real attempts would take minutes):
    // one success, then more failures than the window, one a second.
    const start = Date.parse(attempt!.at) - (STREAK_WINDOW + 600) * 1000;
    const logged = Array.from({ length: STREAK_WINDOW + 500 }, (_, i) => ({
      ...attempt!,
      id: `${attempt!.id}-${i}`,
      at: new Date(start + i * 1000).toISOString(),
      status: i === 0 ? 200 : 404,
    }));
    for (let from = 0; from < logged.length; from += 500) await t.deps.db.insertInto('delivery_attempts').values(logged.slice(from, from + 500)).execute();

    const health = (await owner.get(`/v1/webhooks/${webhook.id}/health`)).body;
    // The newest 10,001 attempts are the real one and the last 10,000 written: all failures.
    expect(health).toMatchObject({ state: 'retrying', failureStreak: STREAK_WINDOW, failingSince: logged[logged.length - STREAK_WINDOW]!.at, lastStatus: 404 });
    const listed = (await owner.get('/v1/webhooks')).body.data.find((item: { id: string }) => item.id === webhook.id);
    expect(listed.health).toMatchObject({ failureStreak: STREAK_WINDOW, failingSince: health.failingSince });
  });

  it('answers hostile input with 400, a body over the limit with 413, and roles without the ability with 403', async () => {
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
    const path = `/v1/webhooks/${webhook.id}/retry-failed`;
    const future = new Date(t.clock.now().getTime() + 60_000).toISOString();
    for (const body of [
      {}, { since: 'yesterday' }, { since: '2026-13-45T99:00:00Z' }, { since: future }, { since: 12 }, { since: null },
      { since: '2026-11-01T00:00:00Z', dryRun: 'yes' }, { since: '2026-11-01T00:00:00Z', extra: 1 }, [], 'text',
      { since: ['2026-11-01T00:00:00Z'] }, { since: { toString: 'x' } },
    ]) {
      const answer = await owner.post(path, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.code).toBe('INVALID_REQUEST');
    }
    const huge = await owner.post(path, { since: '2026-11-01T00:00:00Z', pad: 'x'.repeat(3 * 1024 * 1024) });
    expectError(huge, 413, 'PAYLOAD_TOO_LARGE');
    expectError(await owner.get(`/v1/webhooks/wh_${'0'.repeat(26)}/health`), 404, 'NOT_FOUND');
    expectError(await owner.get('/v1/webhooks/not-an-id/health'), 400, 'INVALID_REQUEST');

    for (const role of ['editor', 'viewer'] as const) {
      const member = await addMember(t, owner, `${role}@example.com`, role);
      expectError(await member.post(path, { since: '2026-11-01T00:00:00Z', dryRun: true }), 403, 'FORBIDDEN');
      expectError(await member.get(`/v1/webhooks/${webhook.id}/health`), 403, 'FORBIDDEN');
    }
    const admin = await addMember(t, owner, 'admin@example.com', 'admin');
    expect((await admin.post(path, { since: '2026-11-01T00:00:00Z', dryRun: true })).body).toEqual({ matched: 0, retried: 0, dryRun: true });
  });
});

describeEachEngine('retry-failed and the URL guard', (engine) => {
  it('still refuses, at the attempt, a webhook whose name now resolves to a private address', async () => {
    // Production mode: public addresses only.
    const t = await startTestApp(engine, {});
    const answers = ['93.184.216.34'];
    t.deps.resolveHost = async (name) => (name === 'moving.example.com' ? answers : []);
    const receiver = new Receiver();
    try {
      await receiver.start();
      const owner = await signedInOwner(t);
      await owner.post('/v1/collections', { name: 'leads' });
      const created = await owner.post('/v1/webhooks', { url: 'https://moving.example.com/hook', events: ['record.created'] });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      // Loopback from now on: every attempt is refused before a socket opens, until the delivery dies.
      answers[0] = '127.0.0.1';
      const since = t.clock.now().toISOString();
      await owner.post('/v1/collections/leads/records', { data: {} });
      const worker = new DeliveryWorker(t.deps);
      await attemptAlongSchedule(worker, t.clock);
      expect((await owner.get(`/v1/webhooks/${created.body.id}/health`)).body).toMatchObject({ state: 'failing', lastStatus: null, lastError: 'destination not allowed' });

      expect((await owner.post(`/v1/webhooks/${created.body.id}/retry-failed`, { since })).body).toEqual({ matched: 1, retried: 1, dryRun: false });
      await worker.drain();
      const deliveries = (await owner.get(`/v1/webhooks/${created.body.id}/deliveries`)).body.data;
      expect(deliveries).toMatchObject([{ state: 'pending', attemptCount: 1 }, { state: 'dead', attemptCount: 8 }]);
      const retry = (await owner.get(`/v1/webhooks/${created.body.id}/deliveries/${deliveries[0].id}`)).body;
      expect(retry.attempts).toMatchObject([{ status: null, error: 'destination not allowed' }]);
      expect(receiver.received).toEqual([]);
    } finally {
      await receiver.stop();
      await closeSender(t.deps);
      await t.close();
    }
  });
});
