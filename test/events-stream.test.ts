import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { buildDeps } from '../src/build-services.js';
import { closeSender } from '../src/delivery/guard-options.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { connectStorage } from '../src/db/connect.js';
import type { Deps } from '../src/deps.js';
import { openEventStreams } from '../src/http/routes/events/stream-events.js';
import { hubFor } from '../src/modules/events/event-hub.js';
import { addMember, Client, inNewWorkspace, signedInOwner } from './support/client.js';
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

  it('sends an event written as soon as the stream answered, however long joining the hub took', async () => {
    const { secret } = await keySecret(['records:read']);
    // Joining the hub (its first read of the sequence) held for a second: long enough for an
    // event written meanwhile to be sequenced. "From now" must be fixed before the answer goes
    // out, or that event falls before it and is never sent (once seen in CI under load).
    const hub = hubFor(t.deps);
    const add = hub.add.bind(hub);
    hub.add = async (listener) => {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      return add(listener);
    };
    const reader = await open(secret, '?types=record.created');
    expect(reader.status).toBe(200);
    await create(1);
    await reader.until((r) => r.events.length === 1, 5000, 'the event written once the stream answered');
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
});

describeEachEngine('the event stream across processes', (engine) => {
  // One process per SQLite file: there is no other process to hear from.
  it.skipIf(engine === 'sqlite')('carries an event written and fanned out by another app on the same database, and forgets one that app erased', async () => {
    const t = await startTestApp(engine);
    // A second app on the same PostgreSQL schema: another process, as far as the database can tell.
    const storage = t.storage as typeof t.storage & { url: string; schema: string };
    const second = await connectStorage({ engine: 'postgres', url: storage.url }, { schema: storage.schema, poolSize: 3 });
    const otherDeps: Deps = buildDeps(t.deps.config, second, t.clock);
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

      // Deleted for good through the first process: the second one's hub, which holds the event
      // for a stream of its own, is told at the commit (NOTIFY) and forgets it.
      const hub = hubFor(otherDeps);
      const held = await EventStreamReader.open(`${await otherApp.listen({ port: 0, host: '127.0.0.1' })}/v1/events/stream?types=record.created`, { authorization: `Bearer ${key}`, 'last-event-id': reader.events[0]!.id! });
      const erased = await otherApp.inject({ method: 'POST', url: '/v1/collections/leads/records', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: { data: { secret: 'erase-me-too' } } });
      await held.until((r) => r.events.length === 1, 5000, 'the second event, held in the second hub');
      expect(hub.retainedBytes(owner.workspaceId!)).toBeGreaterThan(0);
      expect((await owner.call('DELETE', `/v1/collections/leads/records/${erased.json().id}?permanent=true`)).status).toBe(204);
      const deadline = Date.now() + 5000;
      while (hub.retainedBytes(owner.workspaceId!) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(hub.retainedBytes(owner.workspaceId!)).toBe(0);
      held.close();
    } finally {
      await otherWorker.stop();
      await otherApp.close();
      await second.close();
      await t.close();
    }
  });
});

/**
 * The attacks on what open streams cost the server, on one shared app: consumers that never read
 * while large events are written, an idle stream of one workspace while another imports, one
 * workspace filling the server with streams through many keys.
 */
describeEachEngine('event streams under attack', (engine) => {
  const MiB = 1024 * 1024;
  let t: TestApp;
  let owner: Client & { personId: string };
  let other: Client;
  let worker: DeliveryWorker;
  let base: string;
  const readers: EventStreamReader[] = [];
  beforeAll(async () => {
    t = await startTestApp(engine, { streamsPerWorkspace: 4, streamsPerCaller: 2, streamHubBytes: MiB, streamDrainSeconds: 1 });
    owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
    other = await inNewWorkspace(t, owner, 'other');
    await other.post('/v1/collections', { name: 'leads' });
    worker = new DeliveryWorker(t.deps, { idleMs: 200 });
    worker.start();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => {
    for (const reader of readers.splice(0)) reader.close();
    // Every test starts with no stream open, so none counts against the next one's caps.
    await until(() => openEventStreams(t.deps) === 0, 'every stream closed');
  });
  afterAll(async () => {
    await worker.stop();
    await closeSender(t.deps);
    await t.close();
  });

  async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function keySecret(client: Client, scopes = ['records:read']): Promise<{ id: string; secret: string }> {
    const created = await client.post('/v1/keys', { name: 'stream', scopes });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { id: created.body.id, secret: created.body.secret };
  }

  async function open(secret: string, headers: Record<string, string> = {}): Promise<EventStreamReader> {
    const reader = await EventStreamReader.open(`${base}/v1/events/stream?types=record.created`, { authorization: `Bearer ${secret}`, ...headers });
    readers.push(reader);
    return reader;
  }

  async function importRecords(client: Client, count: number, bytesEach: number, from = 0): Promise<void> {
    const big = 'x'.repeat(bytesEach);
    const lines = Array.from({ length: count }, (_, n) => JSON.stringify({ n: from + n, big })).join('\n');
    const imported = await client.call('POST', '/v1/collections/leads/import', lines, { 'content-type': 'application/x-ndjson' });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
  }

  /** A stream over a raw socket that sends its request and then reads nothing. */
  function neverReading(secret: string): Socket {
    const socket = connect(Number(new URL(base).port), '127.0.0.1');
    socket.write(`GET /v1/events/stream?types=record.created HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${secret}\r\n\r\n`);
    socket.pause();
    return socket;
  }

  it('closes consumers that never read once about 1 MiB waits for them, never a whole batch, and they resume with Last-Event-ID', async () => {
    const { secret } = await keySecret(owner);
    const sockets = [neverReading(secret), neverReading(secret)];
    try {
      await until(() => openEventStreams(t.deps) === 2, 'both streams open');
      // 48 events of 200 KB (9.6 MB): one batch of the hub, far more than the bound and the socket buffers.
      const count = 48;
      await importRecords(owner, count, 200_000);
      // The server ends both streams by itself, though neither read a byte.
      await until(() => openEventStreams(t.deps) === 0, 'the server to close the streams that do not read', 10_000);
      const received = await Promise.all(
        sockets.map(
          (socket) =>
            new Promise<string>((resolve) => {
              let text = '';
              socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
              socket.once('close', () => resolve(text));
              socket.resume();
            }),
        ),
      );
      for (const text of received) {
        expect(text).toContain(': closed: this consumer is not keeping up');
        // What was ever waiting for it: the 1 MiB bound plus one event, plus what the kernel's
        // socket buffers took (at most 4 MiB to send here, with the receiver's small default).
        expect(text.length).toBeLessThan(6.5 * MiB);
        const ids = [...text.matchAll(/^id: (evt_\w+)$/gm)].map((match) => match[1]!);
        expect(ids.length).toBeGreaterThan(0);
        expect(ids.length).toBeLessThan(count);
        // Resuming after the last event it got carries the rest: no gap, no repeat.
        const resumed = await open(secret, { 'last-event-id': ids.at(-1)! });
        await resumed.until((r) => r.events.length === count - ids.length, 10_000, 'the rest of the events');
        const numbers = resumed.events.map((event) => JSON.parse(event.data).data.record.data.n as number);
        expect(numbers).toEqual(Array.from({ length: count - ids.length }, (_, n) => ids.length + n));
        resumed.close();
      }
      // The hub kept the owner's events within its byte bound while the streams were open, and nothing now.
      expect(hubFor(t.deps).retainedBytes()).toBeLessThanOrEqual(MiB);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('serves nothing erased from memory: a stream resuming after a permanent delete gets the tombstone, not the data', async () => {
    const { secret } = await keySecret(owner);
    const live = await open(secret);
    await live.until((r) => r.comments.includes('connected'));
    await owner.post('/v1/collections/leads/records', { data: { n: 'before' } });
    const created = await owner.post('/v1/collections/leads/records', { data: { secret: 'erase-me-now' } });
    await live.until((r) => r.events.length === 2, 5000, 'both events, now in the hub');
    const before = live.events[0]!.id!;
    // The hub holds the record's event while the live stream is open; the delete must reach it too.
    expect((await owner.call('DELETE', `/v1/collections/leads/records/${created.body.id}?permanent=true`)).status).toBe(204);
    const resumed = await open(secret, { 'last-event-id': before });
    await resumed.until((r) => r.events.length === 1, 5000, 'the erased event');
    expect(resumed.body).not.toContain('erase-me-now');
    expect(JSON.parse(resumed.events[0]!.data).data.record).toEqual({ id: created.body.id, erased: true });
  });

  it("keeps none of another workspace's events for an idle stream, bounds its own by bytes, and drops all when the last stream closes", async () => {
    const hub = hubFor(t.deps);
    const { secret } = await keySecret(owner);
    const idle = await open(secret);
    await idle.until((r) => r.comments.includes('connected'));
    // The other workspace writes 3 MB of events while only the owner's workspace has a stream here.
    await importRecords(other, 300, 10_000);
    await owner.post('/v1/collections/leads/records', { data: { n: 'after' } });
    // The idle stream got its own event: the hub has read past every one of the other workspace's.
    await idle.until((r) => r.events.length === 1, 10_000, "the owner's event");
    expect(hub.retainedBytes(other.workspaceId!)).toBe(0);
    expect(hub.retainedBytes()).toBeLessThan(2000);

    // Once the other workspace has a stream too, its events are kept, within the byte bound. Fair
    // fan-out sequences a workspace's import a share per round, so the first import may still be
    // taking places after the owner's event did: the stream starts once all of it has, or it
    // would count those late ones among the second import's.
    const unsequenced = async () => Number((await t.deps.db.selectFrom('events').select((eb) => eb.fn.countAll().as('n')).where('workspace_id', '=', other.workspaceId!).where('seq', 'is', null).executeTakeFirstOrThrow()).n);
    for (const deadline = Date.now() + 10_000; (await unsequenced()) > 0;) {
      if (Date.now() > deadline) throw new Error('the first import sequenced: not within 10000 ms');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const theirs = await open((await keySecret(other)).secret);
    await theirs.until((r) => r.comments.includes('connected'));
    await importRecords(other, 300, 10_000);
    await theirs.until((r) => r.events.length === 300, 10_000, "the other workspace's 300 events");
    expect(hub.retainedBytes(other.workspaceId!)).toBeGreaterThan(0);
    expect(hub.retainedBytes()).toBeLessThanOrEqual(MiB);

    theirs.close();
    await until(() => hub.retainedBytes(other.workspaceId!) === 0, "the other workspace's events dropped with its last stream");
    idle.close();
    await until(() => openEventStreams(t.deps) === 0, 'both streams closed');
    expect(hub.retainedBytes()).toBe(0);
  });

  it("caps the streams of one workspace, however many keys it makes, so another's still opens; a revoked key ends all of its streams", async () => {
    const keys = [await keySecret(owner), await keySecret(owner), await keySecret(owner)];
    const held = [await open(keys[0]!.secret), await open(keys[0]!.secret), await open(keys[1]!.secret), await open(keys[1]!.secret)];
    for (const reader of held) expect(reader.status).toBe(200);
    // A fresh key of the same workspace: under its own cap, but the workspace is full.
    const refused = await open(keys[2]!.secret);
    await refused.until((r) => r.ended);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    const error = JSON.parse(refused.body).error;
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.message).toContain('per-workspace cap');
    // The per-caller cap still holds on its own.
    const third = await open(keys[0]!.secret);
    await third.until((r) => r.ended);
    expect(third.status).toBe(429);
    // Another workspace is not counted against it.
    const theirs = await open((await keySecret(other)).secret);
    expect(theirs.status).toBe(200);

    // One check serves both streams of a key: revoking it ends both, promptly, and no other.
    expect((await owner.post(`/v1/keys/${keys[0]!.id}/revoke`)).status).toBe(200);
    const revokedAt = Date.now();
    await Promise.all(held.slice(0, 2).map((reader) => reader.until((r) => r.ended, 3000, 'a stream of the revoked key to end')));
    expect(Date.now() - revokedAt).toBeLessThan(2500);
    for (const reader of held.slice(0, 2)) expect(reader.comments.some((comment) => comment.startsWith('closed: INVALID_API_KEY'))).toBe(true);
    expect(held[2]!.ended || held[3]!.ended || theirs.ended).toBe(false);
  });
});
