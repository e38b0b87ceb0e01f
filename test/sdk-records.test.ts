import { afterEach, beforeEach, expect, it } from 'vitest';
import { closeSender } from '../src/delivery/guard-options.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { Plainbase, PlainbaseError, verifyWebhook } from '../sdk/src/index.js';
import { describeEachEngine } from './support/harness.js';
import { Receiver } from './support/receiver.js';
import { startSdkWorld, type SdkWorld } from './support/sdk-world.js';
import { rejection } from './support/sdk-rejection.js';

const WRITE = ['records:read', 'records:create', 'records:update', 'records:delete'];

interface Lead {
  name: string;
  n?: number;
  city?: string;
}


describeEachEngine('SDK: records against a live server', (engine) => {
  let w: SdkWorld;
  beforeEach(async () => {
    w = await startSdkWorld(engine);
    expect((await w.main.owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
  });
  afterEach(async () => {
    await w?.close();
  });

  it('does what the README shows: create answers the record, list iterates across cursors with a filter, me names the key', async () => {
    const key = await w.main.key(['records:read', 'records:create']);
    let requests = 0;
    const countingFetch: typeof fetch = (input, init) => {
      requests += 1;
      return fetch(input, init);
    };
    const pb = new Plainbase({ url: w.base, key, fetch: countingFetch });
    const leads = pb.collection<Lead>('leads').records;

    const rec = await leads.create({ name: 'Ada', n: 0 });
    expect(rec).toEqual({
      id: expect.stringMatching(/^rec_[0-9a-z]{26}$/),
      collectionId: expect.stringMatching(/^col_/),
      data: { name: 'Ada', n: 0 },
      schemaVersion: null,
      files: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      trashedAt: null,
    });
    // 250 more, ten writers at a time, as a program filling a collection would.
    for (let start = 1; start <= 250; start += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, i) => leads.create({ name: `lead ${start + i}`, n: start + i })));
    }

    const seen: number[] = [];
    for await (const r of leads.list({ filter: 'data.n >= 1', limit: 100 })) seen.push(r.data.n!);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));

    const sizes: number[] = [];
    for await (const page of leads.list({ filter: 'data.n >= 1', sort: '-data.n', limit: 100 }).pages()) sizes.push(page.data.length);
    expect(sizes).toEqual([100, 100, 50]);
    const sorted = await leads.list({ filter: 'data.n > 240', sort: '-data.n' }).toArray();
    expect(sorted.map((r) => r.data.n)).toEqual([250, 249, 248, 247, 246, 245, 244, 243, 242, 241]);

    // Breaking out fetches no further page.
    requests = 0;
    for await (const r of leads.list({ limit: 5 })) if (r) break;
    expect(requests).toBe(1);

    const first = await leads.page({ filter: 'data.n >= 1', limit: 100, count: true });
    expect([first.data.length, first.total, typeof first.nextCursor]).toEqual([100, 250, 'string']);
    const second = await leads.page({ filter: 'data.n >= 1', limit: 100, cursor: first.nextCursor! });
    expect(second.data[0]!.id).not.toBe(first.data[0]!.id);

    // An aggregate, typed from the API's document: the records above counted and summed by a filter.
    const totals = await leads.aggregate({ filter: 'data.n >= 1 && data.n <= 10', metrics: 'count,sum:data.n,max:data.n' });
    expect(totals).toEqual({ data: [{ group: {}, count: 10, sum: { 'data.n': 55 }, max: { 'data.n': 10 } }], nextCursor: null, skipped: { 'data.n': 0 } });

    const me = await pb.me();
    expect(me).toMatchObject({ workspaceId: w.main.id, key: { name: 'sdk test', mode: 'live' }, effectiveScopes: ['records:read', 'records:create'] });
  });

  it('passes list({ search }) through: full-text search in the collection\'s searchFields, across pages', async () => {
    expect((await w.main.owner.patch('/v1/collections/leads', { settings: { searchFields: ['data.name', 'data.city'] } })).status).toBe(200);
    const leads = new Plainbase({ url: w.base, key: await w.main.key(['records:read', 'records:create']) }).collection<Lead>('leads').records;
    for (const [name, city] of [['Ada', 'Garden City'], ['Bob', 'Harbour'], ['Cleo', 'garden-town'], ['Dan', 'Gardner']]) await leads.create({ name: name!, city });
    const names = async (options: Parameters<typeof leads.list>[0]) => (await leads.list(options).toArray()).map((r) => r.data.name).sort();
    expect(await names({ search: 'GARDEN', limit: 1 })).toEqual(['Ada', 'Cleo']);
    expect(await names({ search: 'gard*', sort: 'data.name' })).toEqual(['Ada', 'Cleo', 'Dan']);
    expect(await names({ search: '"garden town"', filter: 'data.name != "Ada"' })).toEqual(['Cleo']);
  });

  it('keeps two workspaces apart: each key sees only the "leads" of its own workspace', async () => {
    const other = await w.addWorkspace('Other');
    expect((await other.owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
    const a = new Plainbase({ url: w.base, key: await w.main.key(WRITE) });
    const b = new Plainbase({ url: w.base, key: await other.key(WRITE) });

    const [inA, inB] = await Promise.all([
      Promise.all([1, 2, 3].map((n) => a.collection<Lead>('leads').records.create({ name: `a${n}` }))),
      Promise.all([1, 2].map((n) => b.collection<Lead>('leads').records.create({ name: `b${n}` }))),
    ]);
    expect((await a.collection<Lead>('leads').records.list().toArray()).map((r) => r.data.name).sort()).toEqual(['a1', 'a2', 'a3']);
    expect((await b.collection<Lead>('leads').records.list().toArray()).map((r) => r.data.name).sort()).toEqual(['b1', 'b2']);
    expect((await a.me()).workspaceId).toBe(w.main.id);
    expect((await b.me()).workspaceId).toBe(other.id);

    // Another workspace's record is not found, by name or by the collection's id, and stays as it was.
    const stranger = await rejection(a.collection('leads').records.get(inB[0]!.id));
    expect([stranger.status, stranger.code]).toEqual([404, 'NOT_FOUND']);
    expect((await rejection(a.collection(inB[0]!.collectionId).records.update(inB[0]!.id, { name: 'taken' }))).code).toBe('NOT_FOUND');
    expect((await b.collection<Lead>('leads').records.get(inB[0]!.id)).data.name).toBe('b1');
    expect(inA).toHaveLength(3);
  });

  it('reads, merges, replaces, trashes and restores a record, with its ETag as the guard', async () => {
    const records = new Plainbase({ url: w.base, key: await w.main.key(WRITE) }).collection<Lead>('leads').records;
    const created = await records.create({ name: 'Ada', city: 'London' });
    expect(created.etag).toBe('"1"');

    const read = await records.get(created.id);
    expect(read.etag).toBe('"1"');
    // The ETag rides along without being a field of the record.
    expect(Object.keys(read)).not.toContain('etag');
    expect(JSON.parse(JSON.stringify(read))).toEqual(created);

    const merged = await records.update(created.id, { city: 'Paris', name: null, n: 3 }, { ifMatch: read.etag });
    expect([merged.data, merged.etag]).toEqual([{ city: 'Paris', n: 3 }, '"2"']);
    const stale = await rejection(records.update(created.id, { city: 'Rome' }, { ifMatch: read.etag }));
    expect([stale.status, stale.code, stale.details]).toEqual([412, 'PRECONDITION_FAILED', { etag: '"2"' }]);
    expect(stale.requestId).toMatch(/^req_/);

    const replaced = await records.replace(created.id, { name: 'Grace' }, { ifMatch: merged.etag });
    expect(replaced.data).toEqual({ name: 'Grace' });

    const trashed = await records.trash(created.id);
    expect(trashed.trashedAt).toEqual(expect.any(String));
    expect((await rejection(records.get(created.id))).code).toBe('NOT_FOUND');
    expect((await records.get(created.id, { trashed: true })).trashedAt).toBe(trashed.trashedAt);
    expect(await records.list().toArray()).toEqual([]);
    expect((await records.list({ trashed: true }).toArray()).map((r) => r.id)).toEqual([created.id]);
    expect((await rejection(records.trash(created.id))).status).toBeGreaterThanOrEqual(400);

    const restored = await records.restore(created.id);
    expect([restored.trashedAt, restored.data]).toEqual([null, { name: 'Grace' }]);
    expect((await rejection(records.restore(created.id))).code).toBe('CONFLICT');
  });

  it('changes records by filter: bulkUpdate and bulkTrash, with a dry run, and a sorted export', async () => {
    const pb = new Plainbase({ url: w.base, key: await w.main.key(WRITE) });
    const leads = pb.collection<Lead>('leads').records;
    for (const [n, city] of [[1, 'Oslo'], [2, 'Rome'], [3, 'Oslo']] as const) await leads.create({ name: `lead ${n}`, n, city });
    expect(await leads.bulkUpdate('data.city = "Oslo"', { city: 'Bergen' }, { dryRun: true })).toEqual({ matched: 2, updated: 2, dryRun: true });
    expect(await leads.bulkUpdate('data.city = "Oslo"', { city: 'Bergen', n: null })).toEqual({ matched: 2, updated: 2, dryRun: false });
    expect((await leads.list({ sort: 'data.name' }).toArray()).map((r) => r.data)).toEqual([{ name: 'lead 1', city: 'Bergen' }, { name: 'lead 2', n: 2, city: 'Rome' }, { name: 'lead 3', city: 'Bergen' }]);
    const exported = await new Response(await leads.export({ sort: '-data.name' })).text();
    expect(exported.trim().split('\n').map((line) => JSON.parse(line).data.name)).toEqual(['lead 3', 'lead 2', 'lead 1']);
    expect(await leads.bulkTrash('*')).toEqual({ matched: 3, trashed: 3, dryRun: false });
    expect(await leads.list().toArray()).toEqual([]);
    const refused = await rejection(leads.bulkTrash(''));
    expect(refused).toBeInstanceOf(PlainbaseError);
    expect((refused as PlainbaseError).status).toBe(400);
  });

  it('lets exactly one of two clients racing to update with the same ETag win, every round', async () => {
    const first = new Plainbase({ url: w.base, key: await w.main.key(WRITE, 'first') }).collection<Lead>('leads').records;
    const second = new Plainbase({ url: w.base, key: await w.main.key(WRITE, 'second') }).collection<Lead>('leads').records;
    const { id } = await first.create({ name: 'contested', n: 0 });
    for (let round = 1; round <= 8; round++) {
      const [mine, theirs] = await Promise.all([first.get(id), second.get(id)]);
      expect(mine.etag).toBe(theirs.etag);
      const outcomes = await Promise.allSettled([
        first.update(id, { city: `first ${round}` }, { ifMatch: mine.etag }),
        second.update(id, { city: `second ${round}` }, { ifMatch: theirs.etag }),
      ]);
      const won = outcomes.filter((o) => o.status === 'fulfilled') as PromiseFulfilledResult<{ data: Lead }>[];
      const lost = outcomes.filter((o) => o.status === 'rejected') as PromiseRejectedResult[];
      expect([won.length, lost.length]).toEqual([1, 1]);
      expect([lost[0]!.reason.code, lost[0]!.reason.status]).toEqual(['PRECONDITION_FAILED', 412]);
      expect((await first.get(id)).data.city).toBe(won[0]!.value.data.city);
    }
  });

  it('creates one record for concurrent creates that share an idempotency key', async () => {
    const records = new Plainbase({ url: w.base, key: await w.main.key(WRITE) }).collection<Lead>('leads').records;
    const made = await Promise.allSettled(Array.from({ length: 6 }, () => records.create({ name: 'once' }, { idempotencyKey: 'import-2026-11-22' })));
    const ids = new Set(made.filter((m) => m.status === 'fulfilled').map((m) => (m as PromiseFulfilledResult<{ id: string }>).value.id));
    // A repeat that arrives while the first is still being written may be refused as a conflict, never duplicated.
    for (const m of made) if (m.status === 'rejected') expect((m.reason as PlainbaseError).code).toBe('CONFLICT');
    expect(ids.size).toBe(1);
    expect((await records.list().toArray()).map((r) => r.id)).toEqual([...ids]);
    expect((await records.create({ name: 'once' }, { idempotencyKey: 'import-2026-11-22' })).id).toBe([...ids][0]);
  });

  it('reaches any route through request(), typed by the OpenAPI document', async () => {
    const pb = new Plainbase({ url: w.base, key: await w.main.key(['collections:read', 'collections:create', 'records:create', 'records:read']) });
    const created = await pb.request('post', '/v1/collections', { body: { name: 'notes', public: true } });
    expect(created).toMatchObject({ name: 'notes', public: true });
    const listed = await pb.request('get', '/v1/collections', { query: { limit: 10 } });
    expect(listed.data.map((c) => c.name).sort()).toEqual(['leads', 'notes']);
    const one = await pb.request('get', '/v1/collections/{col}', { path: { col: 'notes' } });
    expect(one.id).toBe(created.id);
    const rec = await pb.request('post', '/v1/collections/{col}/records', { path: { col: created.id }, body: { data: { text: 'hi' } } });
    // Typed as the record or, for an anonymous public submission, its summary: a key gets the record.
    expect('data' in rec ? rec.data : null).toEqual({ text: 'hi' });
    const refused = await rejection(pb.request('delete', '/v1/collections/{col}', { path: { col: 'notes' } }));
    expect([refused.code, refused.details]).toEqual(['MISSING_SCOPE', { requiredScope: 'collections:delete' }]);
  });
});

describeEachEngine('SDK: webhooks of what the SDK writes', (engine) => {
  let w: SdkWorld;
  let receiver: Receiver;
  beforeEach(async () => {
    w = await startSdkWorld(engine, { env: 'development', webhookAllowPrivate: true });
    receiver = new Receiver();
  });
  afterEach(async () => {
    await receiver.stop();
    await closeSender(w.t.deps);
    await w?.close();
  });

  it('delivers a record created through the SDK as a call verifyWebhook accepts, and refuses it altered or with another secret', async () => {
    // One workspace is enough here: what is checked is the signature of one delivery.
    await w.main.owner.post('/v1/collections', { name: 'leads' });
    const hook = await w.main.owner.post('/v1/webhooks', { url: await receiver.start(), events: ['record.created'] });
    expect(hook.status).toBe(201);
    const pb = new Plainbase({ url: w.base, key: await w.main.key(['records:create']) });
    const rec = await pb.collection('leads').records.create({ name: 'Ada' });
    await new DeliveryWorker(w.t.deps).drain();

    expect(receiver.received).toHaveLength(1);
    const { headers, body } = receiver.received[0]!;
    const now = w.t.clock.now();
    const event = await verifyWebhook(body, headers, hook.body.secret, { now });
    expect(event).toMatchObject({ type: 'record.created', workspaceId: w.main.id, data: { record: { id: rec.id, data: { name: 'Ada' } } } });
    const altered = Buffer.from(body.toString('utf8').replace('Ada', 'Eve'));
    expect((await rejection(verifyWebhook(altered, headers, hook.body.secret, { now }))).code).toBe('WEBHOOK_VERIFICATION_FAILED');
    expect((await rejection(verifyWebhook(body, headers, 'whsec_other', { now }))).details).toEqual({ reason: 'invalid-signature' });
  });
});
