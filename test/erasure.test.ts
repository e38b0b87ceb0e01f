import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closeSender } from '../src/delivery/guard-options.js';
import { onRecordsErased } from '../src/modules/events/outbox-signal.js';
import type { ErasedRecords } from '../src/modules/events/erased-records.js';
import { claimDueDeliveries, recordAttempts } from '../src/modules/webhooks/delivery-queue.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { expectError, inNewWorkspace, signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * A receiver that answers every delivery with the body it was sent, as some do: the delivery
 * log then holds the record's data twice, in the body sent and in the answer kept.
 */
class EchoReceiver {
  status = 200;
  readonly bodies: string[] = [];
  private server: Server | null = null;

  async start(): Promise<string> {
    this.server = createServer((request: IncomingMessage, response: ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        this.bodies.push(body);
        response.writeHead(this.status, { 'content-type': 'application/json' }).end(body);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/**
 * "Deleted for good means gone" (docs/security.md, "What is erased and when"): after a permanent
 * delete of a record or a collection, its data is in no event (feed, webhook body, a delivery
 * still to come), no receiver's answer in the delivery log, and no stored idempotent answer; a
 * replay of its create is refused rather than answered or run again. Every test has a second
 * workspace beside the first, with the same names, keys and data shapes, and checks that nothing
 * of it changed; and every test ends by reading the tables themselves for the erased text.
 */
describeEachEngine('deleted for good means gone', (engine) => {
  let t: TestApp;
  let worker: DeliveryWorker;
  let receiver: EchoReceiver;
  let url: string;
  let a: Client;
  let b: Client;
  const erasures: ErasedRecords[] = [];
  let stopListening: () => void;

  beforeAll(async () => {
    t = await startTestApp(engine, { env: 'development', webhookAllowPrivate: true });
    a = await signedInOwner(t);
    b = await inNewWorkspace(t, a, 'beside');
    receiver = new EchoReceiver();
    url = await receiver.start();
    worker = new DeliveryWorker(t.deps);
    stopListening = onRecordsErased((erased) => erasures.push(erased));
  });
  afterAll(async () => {
    stopListening();
    await receiver.stop();
    await closeSender(t.deps);
    await t.close();
  });

  /** A collection and a webhook on every event of it, in one workspace. */
  async function collectionWithWebhook(client: Client, name: string): Promise<{ collectionId: string; webhookId: string }> {
    const collection = await client.post('/v1/collections', { name });
    expect(collection.status).toBe(201);
    const webhook = await client.post('/v1/webhooks', { url, events: ['*'], collections: [collection.body.id] });
    expect(webhook.status).toBe(201);
    return { collectionId: collection.body.id, webhookId: webhook.body.id };
  }

  const create = (client: Client, collection: string, data: unknown, key: string) =>
    client.post(`/v1/collections/${collection}/records`, { data }, { 'idempotency-key': key });

  /**
   * Sends what is due with the receiver failing once, then answering: every delivery gets a
   * failed attempt (500) and a succeeded one (200), both with the body echoed in the log.
   */
  async function deliverFailingOnce(): Promise<void> {
    receiver.status = 500;
    await worker.drain();
    receiver.status = 200;
    t.clock.advance(15_000);
    await worker.drain();
  }

  /** Every text a workspace's feed and delivery log show: event messages, bodies, attempts' answers. */
  async function everythingShown(client: Client, webhookId: string): Promise<string> {
    const feed = await client.get('/v1/events?limit=1000');
    expect(feed.status).toBe(200);
    const list = await client.get(`/v1/webhooks/${webhookId}/deliveries?limit=1000`);
    expect(list.status).toBe(200);
    const details = [];
    for (const delivery of list.body.data) {
      const detail = await client.get(`/v1/webhooks/${webhookId}/deliveries/${delivery.id}`);
      expect(detail.status).toBe(200);
      details.push(detail.body);
    }
    return JSON.stringify({ feed: feed.body, details });
  }

  /** Every row of the tables that keep copies of record data, as text: what a database dump shows. */
  async function everythingStored(): Promise<string> {
    const tables = ['records', 'events', 'idempotency_keys', 'deliveries', 'delivery_attempts', 'audit_log'] as const;
    const rows = await Promise.all(tables.map((table) => t.deps.db.selectFrom(table).selectAll().execute()));
    return JSON.stringify(rows);
  }

  it('erases a record deleted for good from the feed, the delivery log, a delivery still to come and the stored answer', async () => {
    const inA = await collectionWithWebhook(a, 'people');
    const inB = await collectionWithWebhook(b, 'people');
    const secret = 'ada-secret@example.com';
    const other = 'beside-secret@example.com';
    const kept = 'kept-secret@example.com';
    const created = await create(a, 'people', { email: secret }, 'key-1');
    expect(created.status).toBe(201);
    const recordId = created.body.id;
    // The same key and name in the other workspace, and a second record beside it in this one.
    expect((await create(b, 'people', { email: other }, 'key-1')).status).toBe(201);
    const keptRecord = await create(a, 'people', { email: kept }, 'key-2');
    expect((await a.patch(`/v1/collections/people/records/${recordId}`, { data: { name: 'Ada' } })).status).toBe(200);
    await deliverFailingOnce();
    // A change whose delivery fails and waits for its retry when the record goes.
    expect((await a.patch(`/v1/collections/people/records/${recordId}`, { data: { name: 'Ada L.' } })).status).toBe(200);
    receiver.status = 500;
    await worker.drain();

    const before = await everythingShown(a, inA.webhookId);
    expect(before).toContain(secret);
    expect(before).toContain('Ada L.');

    const purged = await a.delete(`/v1/collections/people/records/${recordId}?permanent=true`);
    expect(purged.status).toBe(204);
    expect(erasures.at(-1)).toMatchObject({ workspaceId: a.workspaceId, collectionId: inA.collectionId, recordId });

    // The retry goes out with the tombstone, not the data.
    receiver.status = 200;
    const sentBefore = receiver.bodies.length;
    t.clock.advance(15_000);
    await worker.drain();
    const retried = receiver.bodies.slice(sentBefore).map((body) => JSON.parse(body));
    expect(retried).toHaveLength(1);
    expect(retried[0]).toMatchObject({ type: 'record.updated', data: { record: { id: recordId, erased: true } } });

    const after = await everythingShown(a, inA.webhookId);
    for (const text of [secret, 'Ada']) expect(after).not.toContain(text);
    expect(after).toContain(kept);
    // The events stay, in their places, each saying only which record it was.
    const feed = (await a.get(`/v1/events?limit=1000`)).body.data.filter((event: any) => event.data.record?.id === recordId);
    expect(feed.map((event: any) => event.type).sort()).toEqual(['record.created', 'record.updated', 'record.updated']);
    for (const event of feed) expect(event.data).toEqual({ record: { id: recordId, erased: true } });
    // Every attempt is still logged, with its status: only the receiver's echo is gone.
    const deliveries = (await a.get(`/v1/webhooks/${inA.webhookId}/deliveries?limit=1000`)).body.data.filter((d: any) => feed.some((e: any) => e.id === d.eventId));
    expect(deliveries).toHaveLength(3);
    const attempts = [];
    for (const delivery of deliveries) attempts.push(...(await a.get(`/v1/webhooks/${inA.webhookId}/deliveries/${delivery.id}`)).body.attempts);
    expect(attempts.map((attempt: any) => attempt.status).sort()).toEqual([200, 200, 200, 500, 500, 500]);
    for (const attempt of attempts) expect(attempt.responseBody).toBe('');

    // The replay of the create: neither the data nor a second record.
    const replay = await create(a, 'people', { email: secret }, 'key-1');
    expect(expectError(replay, 409, 'CONFLICT').details).toMatchObject({ erased: true, recordId });
    expect(JSON.stringify(replay.body)).not.toContain(secret);
    const left = (await a.get('/v1/collections/people/records')).body.data.map((record: any) => record.id);
    expect(left).toEqual([keptRecord.body.id]);
    // The record beside it keeps its answer.
    const keptReplay = await create(a, 'people', { email: kept }, 'key-2');
    expect(keptReplay.status).toBe(201);
    expect(keptReplay.body.data).toEqual({ email: kept });

    // The other workspace, same key, same names: untouched.
    const besideReplay = await create(b, 'people', { email: other }, 'key-1');
    expect(besideReplay.status).toBe(201);
    expect(besideReplay.body.data).toEqual({ email: other });
    const beside = await everythingShown(b, inB.webhookId);
    expect(beside).toContain(other);
    expect(beside).not.toContain('"erased"');

    const stored = await everythingStored();
    for (const text of [secret, 'Ada']) expect(stored).not.toContain(text);
    expect(stored).toContain(other);
  });

  it('erases every record of a collection deleted for good after the trash, and nothing of the collection beside it', async () => {
    const inA = await collectionWithWebhook(a, 'leads');
    const inB = await collectionWithWebhook(b, 'leads');
    await collectionWithWebhook(a, 'notes');
    const secrets = ['lead-one-secret', 'lead-two-secret', 'lead-three-secret'];
    for (const [n, secret] of secrets.entries()) expect((await create(a, 'leads', { who: secret }, `lead-${n}`)).status).toBe(201);
    expect((await create(b, 'leads', { who: 'beside-lead' }, 'lead-0')).status).toBe(201);
    // A record of another collection whose data imitates the start of a leads answer and event:
    // quotes in data are escaped, so neither can be taken for the erased collection's.
    const imitation = { id: 'rec_00000000000000000000000000', collectionId: inA.collectionId, record: { id: 'x' }, note: `{"id":"rec_","collectionId":"${inA.collectionId}"` };
    const note = await create(a, 'notes', imitation, 'note-1');
    expect(note.status).toBe(201);
    const first = (await a.get('/v1/collections/leads/records')).body.data[0];
    expect((await a.put(`/v1/collections/leads/records/${first.id}`, { data: { who: 'lead-replaced-secret' } })).status).toBe(200);
    await deliverFailingOnce();

    expect((await a.delete('/v1/collections/leads')).status).toBe(200);
    // In the trash, the collection's records and their events are all still there.
    expect(await everythingShown(a, inA.webhookId)).toContain(secrets[0]);
    expect((await a.delete(`/v1/collections/${inA.collectionId}?permanent=true`)).status).toBe(204);
    expect(erasures.at(-1)).toMatchObject({ collectionId: inA.collectionId, recordId: null });

    const after = await everythingShown(a, inA.webhookId);
    for (const text of [...secrets, 'lead-replaced-secret']) expect(after).not.toContain(text);
    const leadEvents = (await a.get('/v1/events?limit=1000')).body.data.filter((event: any) => event.collectionId === inA.collectionId);
    // Four record events (three created, one updated) and the collection's own (created, deleted).
    expect(leadEvents.filter((event: any) => event.type.startsWith('record.'))).toHaveLength(4);
    for (const event of leadEvents.filter((e: any) => e.type.startsWith('record.'))) {
      expect(event.data).toEqual({ record: { id: expect.stringMatching(/^rec_/), erased: true } });
    }
    for (const n of [0, 1, 2]) {
      const replay = await create(a, 'leads', { who: secrets[n] }, `lead-${n}`);
      // The collection is gone, so the replay's stored answer is what stands for it: refused.
      expect(expectError(replay, 409, 'CONFLICT').details).toMatchObject({ erased: true });
    }
    // The imitation in the other collection keeps its answer and its events.
    const noteReplay = await create(a, 'notes', imitation, 'note-1');
    expect(noteReplay.status).toBe(201);
    expect(noteReplay.body.data).toEqual(imitation);
    const noteEvents = (await a.get('/v1/events?limit=1000')).body.data.filter((event: any) => event.data.record?.id === note.body.id);
    expect(noteEvents.map((event: any) => event.data.record.data)).toEqual([imitation]);

    expect((await create(b, 'leads', { who: 'beside-lead' }, 'lead-0')).body.data).toEqual({ who: 'beside-lead' });
    expect(await everythingShown(b, inB.webhookId)).toContain('beside-lead');

    const stored = await everythingStored();
    for (const text of [...secrets, 'lead-replaced-secret']) expect(stored).not.toContain(text);
    expect(stored).toContain('beside-lead');
  });

  it('keeps out of the log the echo of an attempt that was on its way when the record was erased', async () => {
    const { webhookId } = await collectionWithWebhook(a, 'orders');
    const record = await create(a, 'orders', { card: 'in-flight-secret' }, 'order-1');
    await worker.drain(); // fans out and delivers: the receiver answers 200
    const replayed = await a.post(`/v1/webhooks/${webhookId}/deliveries/${(await a.get(`/v1/webhooks/${webhookId}/deliveries`)).body.data[0].id}/replay`);
    expect(replayed.status).toBe(201);
    // The worker claims the replay and sends it; the record is deleted for good before the attempt is logged.
    const [due] = await claimDueDeliveries(t.deps, { limit: 1, leaseMs: 60_000, perWebhook: 10, perWorkspace: 10, inFlight: new Map(), inFlightByWorkspace: new Map() });
    expect(due?.message).toContain('in-flight-secret');
    expect((await a.delete(`/v1/collections/orders/records/${record.body.id}?permanent=true`)).status).toBe(204);
    const echo = { ok: true, status: 200, durationMs: 3, responseHeaders: {}, responseBody: due!.message, error: null };
    await recordAttempts(t.deps, [{ delivery: due!, result: echo, attemptedAt: t.clock.now() }]);
    expect(await everythingShown(a, webhookId)).not.toContain('in-flight-secret');
    expect(await everythingStored()).not.toContain('in-flight-secret');
  });

  it('erases a record trashed first, whatever its data holds', async () => {
    await a.post('/v1/collections', { name: 'forms' });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }).filter((key) => !['__proto__', 'constructor', 'prototype', 'marker'].includes(key)), fc.string({ maxLength: 24 }), { minKeys: 1, maxKeys: 4 }), async (data) => {
        n += 1;
        // A marker the data cannot otherwise hold, to look for afterwards.
        const marker = `marker-${n}-${engine}`;
        const record = await create(a, 'forms', { ...data, marker }, `form-${n}`);
        expect(record.status).toBe(201);
        expect((await a.delete(`/v1/collections/forms/records/${record.body.id}`)).status).toBe(200);
        await worker.drain();
        expect((await a.delete(`/v1/collections/forms/records/${record.body.id}?permanent=true`)).status).toBe(204);
        const feed = (await a.get('/v1/events?limit=1000')).body.data.filter((event: any) => event.data.record?.id === record.body.id);
        expect(feed.map((event: any) => event.type).sort()).toEqual(['record.created', 'record.deleted']);
        for (const event of feed) expect(event.data).toEqual({ record: { id: record.body.id, erased: true } });
        expect(await everythingStored()).not.toContain(marker);
        expectError(await create(a, 'forms', { ...data, marker }, `form-${n}`), 409, 'CONFLICT');
      }),
      { numRuns: 5 },
    );
  });
});
