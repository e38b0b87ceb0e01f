import { afterEach, beforeEach, expect, it } from 'vitest';
import { closeSender } from '../src/delivery/guard-options.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { EVENT_RETENTION_MS } from '../src/modules/events/event-feed.js';
import { Client, expectError, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { Receiver } from './support/receiver.js';

/** GET /v1/events: the feed of a workspace's events, with two workspaces side by side. */
describeEachEngine('the event feed', (engine) => {
  let t: TestApp;
  let owner: Client;
  let other: Client;
  let worker: DeliveryWorker;
  beforeEach(async () => {
    t = await startTestApp(engine, { env: 'development', webhookAllowPrivate: true });
    owner = await signedInOwner(t);
    other = new Client(t);
    other.cookie = owner.cookie;
    other.workspaceId = (await owner.post('/v1/workspaces', { name: 'Other' })).body.id;
    worker = new DeliveryWorker(t.deps);
  });
  afterEach(async () => {
    await closeSender(t.deps);
    await t.close();
  });

  /** A key of the owner's workspace with these scopes (and collections); returns a client using it. */
  async function keyClient(scopes: string[], collections?: string[]): Promise<Client> {
    const created = await owner.post('/v1/keys', { name: scopes.join(' '), scopes, ...(collections ? { collections } : {}) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const client = new Client(t);
    const call = client.call.bind(client);
    client.call = (method, url, body, headers = {}) => call(method, url, body, { authorization: `Bearer ${created.body.secret}`, ...headers });
    return client;
  }

  const types = (page: { data: { type: string }[] }) => page.data.map((event) => event.type);

  it('lists newest first, each item byte for byte the body its webhook delivery carries', async () => {
    const receiver = new Receiver();
    const url = await receiver.start();
    try {
      await owner.post('/v1/webhooks', { url, events: ['*'] });
      await owner.post('/v1/collections', { name: 'leads' });
      const { body: record } = await owner.post('/v1/collections/leads/records', { data: { name: 'Zoë', note: 'a "quote" and \u2028' } });
      await owner.patch(`/v1/collections/leads/records/${record.id}`, { data: { n: 2 } });
      await other.post('/v1/collections', { name: 'elsewhere' });
      await worker.drain();

      const answer = await t.app.inject({ method: 'GET', url: '/v1/events', headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId! } });
      expect(answer.statusCode).toBe(200);
      const page = answer.json();
      expect(types(page)).toEqual(['record.updated', 'record.created', 'collection.created']);
      expect(page.nextCursor).toBeNull();
      // Every delivered body appears in the answer exactly as delivered.
      expect(receiver.received).toHaveLength(3);
      for (const call of receiver.received) expect(answer.body).toContain(call.body.toString('utf8'));
      // The other workspace sees only its own.
      expect(types((await other.get('/v1/events')).body)).toEqual(['collection.created']);
    } finally {
      await receiver.stop();
    }
  });

  it('pages by cursor, resumes oldest first after an event, and filters by type and collection', async () => {
    await owner.post('/v1/collections', { name: 'leads' });
    await owner.post('/v1/collections', { name: 'notes' });
    for (let n = 1; n <= 5; n++) await owner.post('/v1/collections/leads/records', { data: { n } });
    await owner.post('/v1/collections/notes/records', { data: { n: 'note' } });
    await worker.drain();

    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const reply: { status: number; body: any } = await owner.get(`/v1/events?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(reply.status).toBe(200);
      seen.push(...reply.body.data);
      cursor = reply.body.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(8);
    expect(new Set(seen.map((event) => event.id)).size).toBe(8);

    const created = seen.filter((event) => event.type === 'record.created').reverse();
    const after = await owner.get(`/v1/events?after=${created[1].id}&types=record.created&collections=leads&limit=2`);
    expect(after.body.data.map((event: any) => event.data.record.data.n)).toEqual([3, 4]);
    const rest = await owner.get(`/v1/events?cursor=${after.body.nextCursor}&types=record.created&collections=leads&limit=2`);
    expect(rest.body.data.map((event: any) => event.data.record.data.n)).toEqual([5]);
    expect(rest.body.nextCursor).toBeNull();

    expect(types((await owner.get('/v1/events?collections=notes')).body)).toEqual(['record.created', 'collection.created']);
    expect(types((await owner.get('/v1/events?types=collection.created')).body)).toEqual(['collection.created', 'collection.created']);
  });

  it('shows a key only the types its scopes read, inside its collection restriction', async () => {
    await owner.post('/v1/collections', { name: 'leads' });
    await owner.post('/v1/collections', { name: 'notes' });
    await owner.post('/v1/collections/leads/records', { data: { n: 1 } });
    await owner.post('/v1/collections/notes/records', { data: { n: 2 } });
    await owner.post('/v1/collections/leads/schemas', { schema: { type: 'object' } });
    await owner.post('/v1/collections/leads/schemas/1/activate');
    await worker.drain();

    const reader = await keyClient(['records:read']);
    // records:read also reads collections' basic details (rule 1), so collection events too.
    expect(types((await reader.get('/v1/events')).body)).toEqual(['record.created', 'record.created', 'collection.created', 'collection.created']);
    expectError(await reader.get('/v1/events?types=schema.updated'), 403, 'MISSING_SCOPE');

    const schemas = await keyClient(['schemas:read']);
    expect(types((await schemas.get('/v1/events')).body)).toEqual(['schema.updated', 'collection.created', 'collection.created']);

    const restricted = await keyClient(['records:read'], ['leads']);
    const mine = (await restricted.get('/v1/events')).body.data;
    expect(mine.map((event: any) => event.type)).toEqual(['record.created', 'collection.created']);
    expect(new Set(mine.map((event: any) => event.collectionId)).size).toBe(1);
    expectError(await restricted.get('/v1/events?collections=notes'), 403, 'COLLECTION_NOT_ALLOWED');

    const writer = await keyClient(['collections:create']);
    expectError(await writer.get('/v1/events'), 403, 'MISSING_SCOPE');
    expectError(await new Client(t).get('/v1/events'), 401, 'UNAUTHENTICATED');
  });

  it('keeps 30 days, and refuses what it cannot serve', async () => {
    await owner.post('/v1/collections', { name: 'leads' });
    await worker.drain();
    const [event] = (await owner.get('/v1/events')).body.data;
    expectError(await owner.get('/v1/events?types=record.exploded'), 400, 'INVALID_REQUEST');
    expectError(await owner.get('/v1/events?collections=nope'), 400, 'INVALID_REQUEST');
    expectError(await owner.get('/v1/events?after=evt_00000000000000000000000000'), 400, 'INVALID_REQUEST');
    expectError(await owner.get('/v1/events?cursor=bm90LWEtY3Vyc29y'), 400, 'INVALID_REQUEST');
    expectError(await owner.get('/v1/events?limit=0'), 400, 'INVALID_REQUEST');
    expectError(await owner.get('/v1/events?since=yesterday'), 400, 'INVALID_REQUEST');
    // Another workspace's event is no place to resume from.
    expectError(await other.get(`/v1/events?after=${event.id}`), 400, 'INVALID_REQUEST');

    t.clock.advance(EVENT_RETENTION_MS + 1000);
    await owner.signIn('owner@example.com', 'correct horse battery');
    expect((await owner.get('/v1/events')).body.data).toEqual([]);
  });
});
