import { connect } from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { closeSender } from '../src/delivery/guard-options.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { connectStorage } from '../src/db/connect.js';
import type { Deps } from '../src/deps.js';
import { addMember, Client, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { EventStreamReader } from './support/sse.js';

/**
 * GET /v1/events/stream over real sockets: the app listens on loopback and a worker runs as in
 * production (woken by writes), so each event travels commit → fan-out → hub → stream.
 */
describeEachEngine('the event stream', (engine) => {
  let t: TestApp;
  let owner: Client & { personId: string };
  let worker: DeliveryWorker;
  let base: string;
  const readers: EventStreamReader[] = [];
  beforeEach(async () => {
    t = await startTestApp(engine, { streamsPerCaller: 3 });
    owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
    worker = new DeliveryWorker(t.deps, { idleMs: 200 });
    worker.start();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => {
    for (const reader of readers.splice(0)) reader.close();
    await worker.stop();
    await closeSender(t.deps);
    await t.close();
  });

  async function keySecret(scopes: string[], as: Client = owner): Promise<{ id: string; secret: string }> {
    const created = await as.post('/v1/keys', { name: 'stream', scopes });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { id: created.body.id, secret: created.body.secret };
  }

  async function open(secret: string, query = '', headers: Record<string, string> = {}): Promise<EventStreamReader> {
    const reader = await EventStreamReader.open(`${base}/v1/events/stream${query}`, { authorization: `Bearer ${secret}`, ...headers });
    readers.push(reader);
    return reader;
  }

  const create = (n: number, client: Client = owner) => client.post('/v1/collections/leads/records', { data: { n } });

  it('sends each event as it happens: id, type, and the message as a delivery carries it', async () => {
    const { secret } = await keySecret(['records:read']);
    const reader = await open(secret, '?types=record.created');
    expect(reader.status).toBe(200);
    expect(reader.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(reader.headers['x-request-id']).toMatch(/^req_/);
    for (const n of [1, 2, 3]) await create(n);
    await reader.until((r) => r.events.length === 3, 5000, 'three events');
    const feed = (await owner.get('/v1/events?types=record.created')).body.data.reverse();
    expect(reader.events.map((event) => event.id)).toEqual(feed.map((event: any) => event.id));
    expect(reader.events.map((event) => event.event)).toEqual(['record.created', 'record.created', 'record.created']);
    expect(reader.events.map((event) => event.data)).toEqual(feed.map((event: any) => JSON.stringify(event)));
  });

  it('resumes after Last-Event-ID with no gap and no repeat', async () => {
    const { secret } = await keySecret(['records:read']);
    const first = await open(secret, '?types=record.created');
    await create(1);
    await create(2);
    await first.until((r) => r.events.length === 2, 5000, 'the first two');
    first.close();
    for (const n of [3, 4, 5]) await create(n);
    const again = await open(secret, '?types=record.created', { 'last-event-id': first.events[1]!.id! });
    await again.until((r) => r.events.length === 3, 5000, 'the three missed');
    await create(6);
    await again.until((r) => r.events.length === 4, 5000, 'the next live one');
    expect(again.events.map((event) => JSON.parse(event.data).data.record.data.n)).toEqual([3, 4, 5, 6]);
  });

  it('closes within a second or two when its key is revoked, saying why', async () => {
    const key = await keySecret(['records:read']);
    const reader = await open(key.secret);
    await reader.until((r) => r.comments.includes('connected'));
    expect((await owner.post(`/v1/keys/${key.id}/revoke`)).status).toBe(200);
    const revokedAt = Date.now();
    await reader.until((r) => r.ended, 3000, 'the end of the stream');
    expect(Date.now() - revokedAt).toBeLessThan(2500);
    expect(reader.comments.some((comment) => comment.startsWith('closed: INVALID_API_KEY'))).toBe(true);
  });

  it("ends a removed person's stream and keeps another person's", async () => {
    const editor = await addMember(t, owner, 'editor@example.com', 'editor');
    const cookie = (client: Client) => ({ cookie: `plainbase_session=${client.cookie}`, 'x-baas-workspace': owner.workspaceId! });
    const theirs = await EventStreamReader.open(`${base}/v1/events/stream`, cookie(editor));
    const mine = await EventStreamReader.open(`${base}/v1/events/stream`, cookie(owner));
    readers.push(theirs, mine);
    await create(1, editor);
    await theirs.until((r) => r.events.length === 1);
    expect((await owner.delete(`/v1/members/${editor.personId}`)).status).toBe(204);
    await theirs.until((r) => r.ended, 3000, 'the removed person\'s stream to end');
    await create(2);
    await mine.until((r) => r.events.length === 2);
    expect(mine.ended).toBe(false);
  });

  it('holds at most the configured streams per caller (429), and frees a slot when one closes', async () => {
    const { secret } = await keySecret(['records:read']);
    const held = [await open(secret), await open(secret), await open(secret)];
    const refused = await open(secret);
    await refused.until((r) => r.ended);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(JSON.parse(refused.body).error.code).toBe('RATE_LIMITED');
    // Another caller is not counted against this one.
    const other = await keySecret(['records:read']);
    expect((await open(other.secret)).status).toBe(200);
    held[0]!.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await open(secret)).status).toBe(200);
  });

  it('closes a consumer that stops reading, with a last comment saying why, instead of buffering without end', async () => {
    const { secret } = await keySecret(['records:read']);
    const port = new URL(base).port;
    // A raw socket that sends the request and then reads nothing until the end.
    const socket = connect(Number(port), '127.0.0.1');
    socket.write(`GET /v1/events/stream?types=record.created HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${secret}\r\n\r\n`);
    socket.pause();
    let received = '';
    try {
      // 12 MB of events: more than the socket buffers and the stream's 1 MiB together.
      const big = 'x'.repeat(4000);
      const lines = Array.from({ length: 3000 }, (_, n) => JSON.stringify({ n, big })).join('\n');
      const imported = await owner.call('POST', '/v1/collections/leads/import', lines, { 'content-type': 'application/x-ndjson' });
      expect(imported.status, JSON.stringify(imported.body)).toBe(200);
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      await new Promise((resolve) => setTimeout(resolve, 3000));
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
      socket.resume();
      await closed;
    } finally {
      socket.destroy();
    }
    expect(received).toContain(': closed: this consumer is not keeping up');
    expect(received.split('\nevent: record.created\n').length - 1).toBeLessThan(3000);
  });
});

describeEachEngine('the event stream across processes', (engine) => {
  // One process per SQLite file: there is no other process to hear from.
  it.skipIf(engine === 'sqlite')('carries an event written and fanned out by another app on the same database', async () => {
    const t = await startTestApp(engine);
    // A second app on the same PostgreSQL schema: another process, as far as the database can tell.
    const storage = t.storage as typeof t.storage & { url: string; schema: string };
    const second = await connectStorage({ engine: 'postgres', url: storage.url }, { schema: storage.schema, poolSize: 3 });
    const otherDeps: Deps = { ...t.deps, db: second.db, dialect: second.dialect, openSnapshot: second.openSnapshot };
    const otherApp = await buildApp(Object.assign(otherDeps, { logger: false as const }));
    const otherWorker = new DeliveryWorker(otherDeps, { idleMs: 200 });
    try {
      const owner = await signedInOwner(t);
      await owner.post('/v1/collections', { name: 'leads' });
      const key = (await owner.post('/v1/keys', { name: 'stream', scopes: ['records:read', 'records:create'] })).body.secret;
      const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const reader = await EventStreamReader.open(`${base}/v1/events/stream?types=record.created`, { authorization: `Bearer ${key}` });
      otherWorker.start();
      const written = await otherApp.inject({ method: 'POST', url: '/v1/collections/leads/records', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: { data: { from: 'the other process' } } });
      expect(written.statusCode).toBe(201);
      await reader.until((r) => r.events.length === 1, 5000, 'the event from the other process');
      expect(JSON.parse(reader.events[0]!.data).data.record.data).toEqual({ from: 'the other process' });
      reader.close();
    } finally {
      await otherWorker.stop();
      await otherApp.close();
      await second.close();
      await t.close();
    }
  });
});
