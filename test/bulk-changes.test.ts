import { afterAll, beforeAll, expect, it } from 'vitest';
import { closeSender } from '../src/delivery/guard-options.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { Client, expectError, inNewWorkspace, KeyClient, signedInOwner } from './support/client.js';
import { outbox } from './support/events.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { Receiver } from './support/receiver.js';

/** Changes by filter (docs/bulk-changes.md): bulk-update and bulk-delete. */
describeEachEngine('changes by filter', (engine) => {
  const CAP = 60;
  let t: TestApp;
  let owner: Client & { personId: string };
  let other: Client;
  let key: Client;
  let keyId = '';
  let collectionNo = 0;

  beforeAll(async () => {
    t = await startTestApp(engine, { bulkMaxRecords: CAP, env: 'development', webhookAllowPrivate: true });
    owner = await signedInOwner(t);
    other = await inNewWorkspace(t, owner, 'Second');
    const created = await owner.post('/v1/keys', { name: 'Cleaner', scopes: ['collections:create', 'records:create', 'records:read', 'records:update', 'records:delete'] });
    keyId = created.body.id;
    key = new KeyClient(t, created.body.secret);
  });
  afterAll(async () => {
    if (!t) return;
    await closeSender(t.deps);
    await t.close();
  });

  /** A new collection of the same name in both workspaces, each holding the same records. */
  async function twoCollections(records: Record<string, unknown>[]): Promise<{ name: string; ids: string[]; otherIds: string[] }> {
    const name = `c${(collectionNo += 1)}`;
    const ids: string[][] = [];
    for (const client of [owner, other]) {
      expect((await client.post('/v1/collections', { name })).status).toBe(201);
      const made: string[] = [];
      for (const data of records) {
        const reply = await client.post(`/v1/collections/${name}/records`, { data });
        expect(reply.status).toBe(201);
        made.push(reply.body.id);
      }
      ids.push(made);
    }
    return { name, ids: ids[0]!, otherIds: ids[1]! };
  }

  const all = async (client: Client, name: string, query = '') => (await client.get(`/v1/collections/${name}/records?limit=1000${query}`)).body.data as any[];
  const versions = async (name: string, id: string) => (await owner.get(`/v1/collections/${name}/records/${id}/versions`)).body.data as any[];
  const eventsOf = async (collectionId: string) => (await outbox(t)).filter((event) => event.collectionId === collectionId);
  /** Everything a bulk change could touch in a collection: its records (trash too) and its events. */
  async function stateOf(client: Client, name: string) {
    const collection = (await client.get(`/v1/collections/${name}`)).body;
    return { live: await all(client, name), trash: await all(client, name, '&trashed=true'), events: (await eventsOf(collection.id)).length };
  }

  it('patches every matched record in one change: a revision, a version and an event each; the other workspace untouched', async () => {
    const { name, ids } = await twoCollections([
      { plan: 'trial', n: 1, keep: 'a', nested: { x: 1, y: 2 } },
      { plan: 'pro', n: 2 },
      { plan: 'trial', n: 3, keep: 'b', nested: { x: 3 } },
      { plan: 'trial', n: 4, old: true },
    ]);
    const otherBefore = await stateOf(other, name);
    const collectionId = (await owner.get(`/v1/collections/${name}`)).body.id;
    const eventsBefore = (await eventsOf(collectionId)).length;

    const reply = await key.post(`/v1/collections/${name}/records/bulk-update`, { filter: 'data.plan = "trial"', patch: { plan: 'expired', old: null, nested: { y: null, z: 9 } } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toEqual({ matched: 3, updated: 3, dryRun: false });

    const records = await all(owner, name);
    expect(records.map((record) => record.data)).toEqual([
      { plan: 'expired', n: 1, keep: 'a', nested: { x: 1, z: 9 } },
      { plan: 'pro', n: 2 },
      { plan: 'expired', n: 3, keep: 'b', nested: { x: 3, z: 9 } },
      { plan: 'expired', n: 4, nested: { z: 9 } },
    ]);
    const requestId = reply.headers['x-request-id'];
    for (const id of [ids[0]!, ids[2]!, ids[3]!]) {
      const [latest, first] = await versions(name, id);
      expect(latest).toMatchObject({ revision: 2, change: 'updated', changedBy: { type: 'key', id: keyId, name: 'Cleaner' }, requestId });
      expect(latest.data).toEqual(records.find((record) => record.id === id).data);
      expect(first.revision).toBe(1);
      expect((await owner.get(`/v1/collections/${name}/records/${id}`)).headers.etag).toBe('"2"');
    }
    expect((await versions(name, ids[1]!)).length).toBe(1);

    const events = (await eventsOf(collectionId)).slice(eventsBefore);
    expect(events.map((event) => event.type)).toEqual(['record.updated', 'record.updated', 'record.updated']);
    expect(events.map((event) => event.data.record.id).sort()).toEqual([ids[0], ids[2], ids[3]].sort());
    for (const event of events) expect(event.data.record.data).toEqual(records.find((record) => record.id === event.data.record.id).data);

    // The same patch again changes nothing: no revision, no event.
    const again = await key.post(`/v1/collections/${name}/records/bulk-update`, { filter: 'data.plan = "expired"', patch: { plan: 'expired' } });
    expect(again.body).toEqual({ matched: 3, updated: 0, dryRun: false });
    expect((await eventsOf(collectionId)).length).toBe(eventsBefore + 3);

    expect(await stateOf(other, name)).toEqual(otherBefore);
  });

  it('delivers each changed record\'s event to webhooks once the change commits, and lists it in the event feed', async () => {
    const receiver = new Receiver();
    const url = await receiver.start();
    try {
      const { name, ids } = await twoCollections([{ n: 1 }, { n: 2 }, { n: 3 }]);
      const webhook = await owner.post('/v1/webhooks', { url, events: ['record.updated', 'record.deleted'] });
      expect(webhook.status).toBe(201);
      expect((await owner.post(`/v1/collections/${name}/records/bulk-update`, { filter: 'data.n >= 2', patch: { big: true } })).body.updated).toBe(2);
      expect((await owner.post(`/v1/collections/${name}/records/bulk-delete`, { filter: 'data.n = 1' })).body.trashed).toBe(1);
      await new DeliveryWorker(t.deps).drain();
      const delivered = receiver.received.map((call) => JSON.parse(call.body.toString('utf8')));
      expect(delivered.map((event) => [event.type, event.data.record.id]).sort()).toEqual([['record.deleted', ids[0]], ['record.updated', ids[1]], ['record.updated', ids[2]]].sort());
      expect(delivered.find((event) => event.data.record.id === ids[2]).data.record.data).toEqual({ n: 3, big: true });
      const feed = (await owner.get('/v1/events?limit=1000')).body.data as any[];
      for (const event of delivered) expect(feed.map((listed) => listed.id)).toContain(event.id);
      expect((await other.get('/v1/events?limit=1000')).body.data.some((listed: any) => delivered.some((event) => event.id === listed.id))).toBe(false);
      await owner.delete(`/v1/webhooks/${webhook.body.id}`);
    } finally {
      await receiver.stop();
    }
  });

  it('answers a dry run with the counts and writes nothing', async () => {
    const { name } = await twoCollections([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const before = await stateOf(owner, name);
    const update = await owner.post(`/v1/collections/${name}/records/bulk-update`, { filter: 'data.n >= 2', patch: { n: 0 }, dryRun: true });
    expect(update.body).toEqual({ matched: 2, updated: 2, dryRun: true });
    const unchanged = await owner.post(`/v1/collections/${name}/records/bulk-update`, { filter: '*', patch: {}, dryRun: true });
    expect(unchanged.body).toEqual({ matched: 3, updated: 0, dryRun: true });
    const trash = await owner.post(`/v1/collections/${name}/records/bulk-delete`, { filter: 'data.n = 1', dryRun: true });
    expect(trash.body).toEqual({ matched: 1, trashed: 1, dryRun: true });
    expect(await stateOf(owner, name)).toEqual(before);
    for (const record of before.live) expect((await versions(name, record.id)).length).toBe(1);
  });

  it('changes nothing when a patched record would break the active schema, and names the first failures', async () => {
    const { name } = await twoCollections(Array.from({ length: 14 }, (_, n) => ({ n })));
    await owner.post(`/v1/collections/${name}/schemas`, { schema: { type: 'object', properties: { n: { type: 'integer' }, label: { type: 'string', maxLength: 3 } } } });
    expect((await owner.post(`/v1/collections/${name}/schemas/1/activate`)).status).toBe(200);
    const before = await stateOf(owner, name);
    const bad = await owner.post(`/v1/collections/${name}/records/bulk-update`, { filter: '*', patch: { n: 'twelve' } });
    const error = expectError(bad, 422, 'SCHEMA_VALIDATION_FAILED');
    expect(error.details!.failed).toBe(14);
    expect(error.details!.records).toHaveLength(10);
    expect(error.details!.records[0]).toEqual({ recordId: before.live[0].id, errors: [expect.objectContaining({ field: 'data.n' })] });
    expect(await stateOf(owner, name)).toEqual(before);
    // A dry run tells the same.
    expectError(await owner.post(`/v1/collections/${name}/records/bulk-update`, { filter: '*', patch: { n: 'twelve' }, dryRun: true }), 422, 'SCHEMA_VALIDATION_FAILED');
    // One failing record is enough to stop every other.
    const one = await owner.post(`/v1/collections/${name}/records/bulk-update`, { filter: 'data.n >= 10', patch: { label: 'ok' } });
    expect(one.body).toEqual({ matched: 4, updated: 4, dryRun: false });
    const mixed = await owner.post(`/v1/collections/${name}/records/bulk-update`, { filter: 'data.n >= 10', patch: { n: null, label: 'long' } });
    expect(expectError(mixed, 422, 'SCHEMA_VALIDATION_FAILED').details!.failed).toBe(4);
    expect((await all(owner, name, '&filter=data.label%20%3D%20%22ok%22')).length).toBe(4);
  });

  it('moves every matched record to the trash: a version and a record.deleted each, restorable one by one', async () => {
    const { name, ids } = await twoCollections([{ s: 'spam' }, { s: 'ham' }, { s: 'spam', x: [1, { y: 2 }] }]);
    const otherBefore = await stateOf(other, name);
    const collectionId = (await owner.get(`/v1/collections/${name}`)).body.id;
    const eventsBefore = (await eventsOf(collectionId)).length;
    const reply = await owner.post(`/v1/collections/${name}/records/bulk-delete`, { filter: 'data.s = "spam"' });
    expect(reply.body).toEqual({ matched: 2, trashed: 2, dryRun: false });
    expect((await all(owner, name)).map((record) => record.id)).toEqual([ids[1]]);
    const trash = await all(owner, name, '&trashed=true');
    expect(trash.map((record) => record.id)).toEqual([ids[0], ids[2]]);
    expect(trash[1].data).toEqual({ s: 'spam', x: [1, { y: 2 }] });
    const [latest] = await versions(name, ids[2]!);
    expect(latest).toMatchObject({ revision: 2, change: 'trashed', data: { s: 'spam', x: [1, { y: 2 }] }, changedBy: { type: 'person', id: owner.personId }, requestId: reply.headers['x-request-id'] });
    const events = (await eventsOf(collectionId)).slice(eventsBefore);
    expect(events.map((event) => [event.type, event.data.record.id])).toEqual([['record.deleted', ids[0]], ['record.deleted', ids[2]]]);
    expect(events[1]!.data).toEqual({ record: { id: ids[2], data: { s: 'spam', x: [1, { y: 2 }] } } });
    // The trash is out of reach: a second bulk-delete matches nothing, a bulk-update leaves it.
    expect((await owner.post(`/v1/collections/${name}/records/bulk-delete`, { filter: 'data.s = "spam"' })).body).toEqual({ matched: 0, trashed: 0, dryRun: false });
    expect((await owner.post(`/v1/collections/${name}/records/bulk-update`, { filter: '*', patch: { s: 'x' } })).body).toEqual({ matched: 1, updated: 1, dryRun: false });
    const restored = await owner.post(`/v1/collections/${name}/records/${ids[0]}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.headers.etag).toBe('"3"');
    expect(await stateOf(other, name)).toEqual(otherBefore);
  });

  it('refuses more matched records than the cap, naming it, and changes nothing', async () => {
    const { name } = await twoCollections([]);
    const rows = Array.from({ length: CAP + 1 }, (_, n) => JSON.stringify({ n })).join('\n');
    expect((await owner.call('POST', `/v1/collections/${name}/import`, rows, { 'content-type': 'application/x-ndjson' })).body.imported).toBe(CAP + 1);
    const before = await stateOf(owner, name);
    for (const reply of [
      await owner.post(`/v1/collections/${name}/records/bulk-update`, { filter: '*', patch: { n: 0 } }),
      await owner.post(`/v1/collections/${name}/records/bulk-delete`, { filter: 'data.n >= 0' }),
    ]) {
      const error = expectError(reply, 400, 'INVALID_REQUEST');
      expect(error.details).toMatchObject({ field: 'body.filter', limit: CAP });
      expect(error.message).toContain('PLAINBASE_BULK_MAX_RECORDS');
    }
    expect(await stateOf(owner, name)).toEqual(before);
    // Exactly the cap is allowed.
    expect((await owner.post(`/v1/collections/${name}/records/bulk-delete`, { filter: `data.n < ${CAP}` })).body).toEqual({ matched: CAP, trashed: CAP, dryRun: false });
  });

  it('loses no single write that races a bulk change: each is kept or refused, and every revision has its version', async () => {
    const count = 50;
    const { name, ids } = await twoCollections(Array.from({ length: count }, (_, n) => ({ n, group: 'race' })));
    const second = new Client(t);
    Object.assign(second, { cookie: owner.cookie, workspaceId: owner.workspaceId });
    const singles = ids.slice(0, 20).map((id, i) => ({ id, i }));
    const [bulk, ...replies] = await Promise.all([
      key.post(`/v1/collections/${name}/records/bulk-update`, { filter: 'data.group = "race"', patch: { bulk: true } }),
      ...singles.map(({ id, i }) => second.patch(`/v1/collections/${name}/records/${id}`, { data: { single: i } })),
    ]);
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(200);
    expect(bulk.body.updated).toBe(count);
    const records = new Map((await all(owner, name)).map((record) => [record.id, record]));
    for (const [index, reply] of replies.entries()) {
      const { id, i } = singles[index]!;
      const record = records.get(id);
      expect(record.data.bulk).toBe(true);
      if (reply.status === 200) expect(record.data.single).toBe(i);
      else {
        expectError(reply, 412, 'PRECONDITION_FAILED');
        expect(record.data.single).toBeUndefined();
      }
    }
    for (const id of ids) {
      const got = await owner.get(`/v1/collections/${name}/records/${id}`);
      const list = await versions(name, id);
      const revision = Number(String(got.headers.etag).replaceAll('"', ''));
      expect(list.map((version) => version.revision)).toEqual(Array.from({ length: revision }, (_, n) => revision - n));
      expect(list[0].data).toEqual(got.body.data);
    }
  });

  it('keeps every record whole when single trashes race a bulk-update and single updates race a bulk-delete', async () => {
    const count = 40;
    const second = new Client(t);
    Object.assign(second, { cookie: owner.cookie, workspaceId: owner.workspaceId });
    const checkHistory = async (name: string, ids: string[]) => {
      for (const id of ids) {
        const got = await owner.get(`/v1/collections/${name}/records/${id}?trashed=true`);
        expect(got.status).toBe(200);
        const list = await versions(name, id);
        const revision = Number(String(got.headers.etag).replaceAll('"', ''));
        expect(list.map((version) => version.revision)).toEqual(Array.from({ length: revision }, (_, n) => revision - n));
        expect(list[0].data).toEqual(got.body.data);
        expect(list[0].change === 'trashed').toBe(got.body.trashedAt !== null);
      }
    };
    {
      const { name, ids } = await twoCollections(Array.from({ length: count }, (_, n) => ({ n })));
      const [bulk, ...replies] = await Promise.all([
        key.post(`/v1/collections/${name}/records/bulk-update`, { filter: '*', patch: { bulk: true } }),
        ...ids.slice(0, 15).map((id) => second.delete(`/v1/collections/${name}/records/${id}`)),
      ]);
      expect([200]).toContain(bulk.status);
      for (const reply of replies) expect([200, 412], JSON.stringify(reply.body)).toContain(reply.status);
      await checkHistory(name, ids);
      // Every record the bulk change matched has its patch; a trash that answered 200 holds.
      for (const [index, reply] of replies.entries()) {
        const got = await owner.get(`/v1/collections/${name}/records/${ids[index]}?trashed=true`);
        if (reply.status === 200) expect(got.body.trashedAt).not.toBeNull();
      }
    }
    {
      const { name, ids } = await twoCollections(Array.from({ length: count }, (_, n) => ({ n })));
      const [bulk, ...replies] = await Promise.all([
        key.post(`/v1/collections/${name}/records/bulk-delete`, { filter: '*' }),
        ...ids.slice(0, 15).map((id, i) => second.patch(`/v1/collections/${name}/records/${id}`, { data: { single: i } })),
      ]);
      expect(bulk.status).toBe(200);
      expect(bulk.body.trashed).toBe(count);
      for (const reply of replies) expect([200, 409, 412], JSON.stringify(reply.body)).toContain(reply.status);
      await checkHistory(name, ids);
      for (const [index, reply] of replies.entries()) {
        const got = await owner.get(`/v1/collections/${name}/records/${ids[index]}?trashed=true`);
        expect(got.body.data.single).toBe(reply.status === 200 ? index : undefined);
      }
    }
  });

  it('lets only callers with the ability, on collections they may reach; never the public', async () => {
    const { name } = await twoCollections([{ n: 1 }]);
    // A public collection open to submissions (the anonymous caller below).
    expect((await owner.patch(`/v1/collections/${name}`, { public: true, settings: { submissions: { enabled: true, origins: ['https://example.com'] } } })).status).toBe(200);
    const before = await stateOf(owner, name);
    const readOnly = await owner.post('/v1/keys', { name: 'reader', scopes: ['records:read', 'records:delete'] });
    const reader = new KeyClient(t, readOnly.body.secret);
    expect(expectError(await reader.post(`/v1/collections/${name}/records/bulk-update`, { filter: '*', patch: { n: 2 } }), 403, 'MISSING_SCOPE').details!.requiredScope).toBe('records:update');
    const deleter = await owner.post('/v1/keys', { name: 'updater', scopes: ['records:update'] });
    expect(expectError(await new KeyClient(t, deleter.body.secret).post(`/v1/collections/${name}/records/bulk-delete`, { filter: '*' }), 403, 'MISSING_SCOPE').details!.requiredScope).toBe('records:delete');
    const elsewhere = await owner.post('/v1/collections', { name: `${name}_other` });
    const restricted = await owner.post('/v1/keys', { name: 'restricted', scopes: ['records:update', 'records:delete'], collections: [elsewhere.body.id] });
    const restrictedKey = new KeyClient(t, restricted.body.secret);
    expectError(await restrictedKey.post(`/v1/collections/${name}/records/bulk-update`, { filter: '*', patch: { n: 2 } }), 403, 'COLLECTION_NOT_ALLOWED');
    expectError(await restrictedKey.post(`/v1/collections/${name}/records/bulk-delete`, { filter: '*' }), 403, 'COLLECTION_NOT_ALLOWED');
    expect((await restrictedKey.post(`/v1/collections/${name}_other/records/bulk-delete`, { filter: '*' })).body).toEqual({ matched: 0, trashed: 0, dryRun: false });
    // A public collection open to submissions still takes no bulk change without a credential.
    const anonymous = new Client(t);
    for (const path of ['bulk-update', 'bulk-delete']) {
      expectError(await anonymous.post(`/v1/collections/${(await owner.get(`/v1/collections/${name}`)).body.id}/records/${path}`, { filter: '*', patch: {} }), 401, 'UNAUTHENTICATED');
    }
    expect(await stateOf(owner, name)).toEqual(before);
    // Another workspace's collection is not found.
    expectError(await other.post(`/v1/collections/${(await owner.get(`/v1/collections/${name}`)).body.id}/records/bulk-delete`, { filter: '*' }), 404, 'NOT_FOUND');
  });

  it('answers hostile input with 400, never a 500, and keeps caller keys away from prototypes', async () => {
    const { name, ids } = await twoCollections([{ n: 1 }]);
    const before = await stateOf(owner, name);
    const url = `/v1/collections/${name}/records/bulk-update`;
    const deep = (levels: number): unknown => (levels === 0 ? 1 : { a: deep(levels - 1) });
    const refusals: [unknown, string][] = [
      [{ patch: { n: 2 } }, 'body'],
      [{ filter: '', patch: { n: 2 } }, 'body.filter'],
      [{ filter: '   ', patch: { n: 2 } }, 'body.filter'],
      [{ filter: 'data.n = ', patch: { n: 2 } }, 'body.filter'],
      [{ filter: 'data.n == 1', patch: { n: 2 } }, 'body.filter'],
      [{ filter: 'x'.repeat(5000), patch: { n: 2 } }, 'body.filter'],
      [{ filter: `${'('.repeat(40)}data.n = 1${')'.repeat(40)}`, patch: { n: 2 } }, 'body.filter'],
      [{ filter: '*' }, 'body'],
      [{ filter: '*', patch: [1] }, 'body.patch'],
      [{ filter: '*', patch: 'x' }, 'body.patch'],
      [{ filter: '*', patch: null }, 'body.patch'],
      [{ filter: '*', patch: { n: 2 }, extra: 1 }, 'body'],
      [{ filter: '*', patch: { n: 2 }, dryRun: 'yes' }, 'body.dryRun'],
      [{ filter: '*', patch: deep(101) }, 'body'],
    ];
    for (const [body, field] of refusals) {
      const error = expectError(await owner.post(url, body), 400, 'INVALID_REQUEST');
      expect(String(error.details?.field ?? 'body'), JSON.stringify(body).slice(0, 80)).toContain(field);
    }
    expectError(await owner.post(`/v1/collections/${name}/records/bulk-delete`, { filter: 'nope' }), 400, 'INVALID_REQUEST');
    // A patch past the body limit (1 MiB) is refused as any such body is.
    expectError(await owner.post(url, { filter: '*', patch: { big: 'x'.repeat(1_100_000) } }), 413, 'PAYLOAD_TOO_LARGE');
    expectError(await owner.post(url, { filter: '*', patch: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])) }), 413, 'PAYLOAD_TOO_LARGE');
    expectError(await owner.call('POST', url, '{"filter":"*","patch":', { 'content-type': 'application/json' }), 400, 'INVALID_REQUEST');
    expect(await stateOf(owner, name)).toEqual(before);

    // toString, hasOwnProperty and valueOf are fields like any other, merged as a single PATCH merges them.
    const fields = '{"toString":"x","hasOwnProperty":{"y":1},"valueOf":null}';
    const reply = await owner.call('POST', url, `{"filter":"*","patch":${fields}}`, { 'content-type': 'application/json' });
    expect(reply.body).toEqual({ matched: 1, updated: 1, dryRun: false });
    const bulkText = (await owner.call('GET', `/v1/collections/${name}/records/${ids[0]}`)).body;
    const single = await other.call('PATCH', `/v1/collections/${name}/records/${(await all(other, name))[0].id}`, `{"data":${fields}}`, { 'content-type': 'application/json' });
    expect(single.status).toBe(200);
    const singleText = (await other.call('GET', `/v1/collections/${name}/records/${single.body.id}`)).body;
    expect(JSON.stringify(bulkText.data)).toBe(JSON.stringify(singleText.data));
    expect(Object.keys(bulkText.data)).toContain('toString');
    // Keys that could reach a prototype are refused, as in any record data.
    for (const polluting of ['{"__proto__":{"polluted":"YES"}}', '{"a":{"__proto__":{"polluted":"YES"}}}', '{"constructor":{"prototype":{"polluted":"YES"}}}']) {
      const refused = expectError(await owner.call('POST', url, `{"filter":"*","patch":${polluting}}`, { 'content-type': 'application/json' }), 400, 'INVALID_REQUEST');
      expect(refused.details!.field).toMatch(/^body\.patch/);
    }
    expect((await all(owner, name))[0].revision ?? (await owner.get(`/v1/collections/${name}/records/${ids[0]}`)).headers.etag).toBe('"2"');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
  });
});

/** A change of many records writes its events in an import's lane of the outbox; they reach webhooks all the same. */
describeEachEngine('a large change by filter', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeAll(async () => {
    t = await startTestApp(engine, { env: 'development', webhookAllowPrivate: true });
    owner = await signedInOwner(t);
  });
  afterAll(async () => {
    if (!t) return;
    await closeSender(t.deps);
    await t.close();
  });

  it('delivers the events of 1,200 changed records, each once', async () => {
    const receiver = new Receiver();
    const url = await receiver.start();
    try {
      const count = 1200;
      expect((await owner.post('/v1/collections', { name: 'many' })).status).toBe(201);
      const lines = Array.from({ length: count }, (_, n) => JSON.stringify({ n })).join('\n');
      expect((await owner.call('POST', '/v1/collections/many/import', lines, { 'content-type': 'application/x-ndjson' })).body.imported).toBe(count);
      const worker = new DeliveryWorker(t.deps);
      await worker.drain();
      expect((await owner.post('/v1/webhooks', { url, events: ['record.updated'] })).status).toBe(201);
      expect((await owner.post('/v1/collections/many/records/bulk-update', { filter: '*', patch: { done: true } })).body).toEqual({ matched: count, updated: count, dryRun: false });
      // Through an import's lane (its events carry the lane's id), as a large import's are.
      const laned = await t.deps.db.selectFrom('events').select((eb) => eb.fn.countAll().as('n')).where('type', '=', 'record.updated').where('import_id', 'is not', null).executeTakeFirstOrThrow();
      expect(Number(laned.n)).toBe(count);
      const waiting = async () => Number((await t.deps.db.selectFrom('events').select((eb) => eb.fn.countAll().as('n')).where('fanned_out_at', 'is', null).executeTakeFirstOrThrow()).n);
      for (let round = 0; round < 20 && (await waiting()) > 0; round += 1) await worker.drain();
      expect(await waiting()).toBe(0);
      const delivered = receiver.received.map((call) => JSON.parse(call.body.toString('utf8')));
      expect(delivered.every((event) => event.type === 'record.updated' && event.data.record.data.done === true)).toBe(true);
      expect(new Set(delivered.map((event) => event.data.record.id)).size).toBe(count);
      expect(delivered).toHaveLength(count);
    } finally {
      await receiver.stop();
    }
  }, 120_000);
});
