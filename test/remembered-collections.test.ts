import { newVersionRow } from '../src/modules/history/record-versions.js';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { CollectionsTable } from '../src/db/schema.js';
import { newId } from '../src/ids.js';
import { newEventRow } from '../src/modules/events/outbox.js';
import { createInOneStatement } from '../src/modules/records/one-statement-create.js';
import { newRecordRow } from '../src/modules/records/record-shape.js';
import { Client, expectError, inNewWorkspace, KeyClient, sameSessionOn, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, startTestAppBeside, type TestApp } from './support/harness.js';

/**
 * On PostgreSQL a create is one statement, written against the collection this process last saw
 * under the same name (src/modules/records/one-statement-create.ts). These tests change the
 * collection through a second app on the same database, as another process would, and check
 * that the very next create through the first answers what is true now. On SQLite the same
 * requests take the transactional path: the answers must be the same there.
 */
describeEachEngine('creates against a remembered collection', (engine) => {
  let a: TestApp;
  let b: TestApp;
  let ownerA: Client;
  let ownerB: Client;
  let keyA: Client;

  let collection = '';

  beforeAll(async () => {
    a = await startTestApp(engine);
    b = await startTestAppBeside(a);
    ownerA = await signedInOwner(a);
    ownerB = sameSessionOn(b, ownerA);
    const key = await ownerA.post('/v1/keys', { name: 'writer', scopes: ['records:create', 'records:read'] });
    keyA = new KeyClient(a, key.body.secret);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });
  // Each test its own collection, named anew: what one remembers cannot help another.
  let tests = 0;
  beforeEach(async () => {
    collection = `notes_${++tests}`;
    expect((await ownerA.post('/v1/collections', { name: collection })).status).toBe(201);
  });

  /** Every record of the collection has its one record.created event and, written with a key, its audit entry. */
  async function expectWholeWrites(collectionId: string, records: number, audited: number): Promise<void> {
    const db = a.storage.db;
    const recordIds = (await db.selectFrom('records').select('id').where('collection_id', '=', collectionId).execute()).map((row) => row.id).sort();
    expect(recordIds).toHaveLength(records);
    const events = await db.selectFrom('events').select('data').where('collection_id', '=', collectionId).where('type', '=', 'record.created').execute();
    expect(events.map((event) => (JSON.parse(event.data) as { record: { id: string } }).record.id).sort()).toEqual(recordIds);
    const audit = await db.selectFrom('audit_log').select('target_id').where('action', '=', 'record.created').where('target_id', 'in', recordIds.length ? recordIds : ['none']).execute();
    expect(audit).toHaveLength(audited);
  }

  it('writes the record, its event and its audit entry together, as the transactional create does', async () => {
    const first = await keyA.post(`/v1/collections/${collection}/records`, { data: { n: 1 } });
    const second = await keyA.post(`/v1/collections/${collection}/records`, { data: { n: 2 } });
    const byPerson = await ownerA.post(`/v1/collections/${collection}/records`, { data: { n: 3 } });
    for (const reply of [first, second, byPerson]) {
      expect(reply.status).toBe(201);
      expect(reply.headers.etag).toBe('"1"');
    }
    expect(second.body).toEqual({ ...second.body, data: { n: 2 }, schemaVersion: null, files: [] });
    expect((await keyA.get(`/v1/collections/${collection}/records/${second.body.id}`)).body).toEqual(second.body);
    // People's record writes are not audited (their events say it all); a key's are.
    await expectWholeWrites(first.body.collectionId, 3, 2);
  });

  it('creates in one statement on PostgreSQL once the collection is remembered (SQLite: always the transactional way)', async () => {
    const workspaceId = ownerA.workspaceId!;
    const rowsFor = (collection: CollectionsTable, schemaVersion: number | null) => {
      const record = newRecordRow({ id: newId('rec'), workspaceId, collectionId: collection.id, dataJson: '{"direct":true}', schemaVersion, at: new Date().toISOString() });
      const version = newVersionRow(record, 'created', new Date(), { actor: { type: 'system', id: null, name: null }, meta: { ip: null, userAgent: null, requestId: null } });
      return { record, version, event: newEventRow(new Date(), { workspaceId, collectionId: collection.id, type: 'record.created', data: { record: { id: record.id } } }), audit: null };
    };
    // Nothing remembered yet: the caller must take the transactional way.
    expect(await createInOneStatement(a.deps, workspaceId, collection, { direct: true }, rowsFor)).toBeNull();
    const first = await keyA.post(`/v1/collections/${collection}/records`, { data: { n: 1 } });
    const direct = await createInOneStatement(a.deps, workspaceId, collection, { direct: true }, rowsFor);
    expect(direct !== null).toBe(engine === 'postgres');
    await expectWholeWrites(first.body.collectionId, engine === 'postgres' ? 2 : 1, 1);
  });

  it('answers 404 for a name the collection no longer has, and writes under its new name', async () => {
    const first = await keyA.post(`/v1/collections/${collection}/records`, { data: { n: 1 } });
    const renamed = `${collection}_renamed`;
    expect((await ownerB.patch(`/v1/collections/${collection}`, { name: renamed })).status).toBe(200);
    expectError(await keyA.post(`/v1/collections/${collection}/records`, { data: { n: 2 } }), 404, 'NOT_FOUND');
    expect((await keyA.post(`/v1/collections/${renamed}/records`, { data: { n: 3 } })).status).toBe(201);

    // A new collection takes the old name: creates under the name go to it, not to the renamed one.
    const fresh = await ownerB.post('/v1/collections', { name: collection });
    const into = await keyA.post(`/v1/collections/${collection}/records`, { data: { n: 4 } });
    expect(into.body.collectionId).toBe(fresh.body.id);
    await expectWholeWrites(first.body.collectionId, 2, 2);
    await expectWholeWrites(fresh.body.id, 1, 1);
  });

  it('checks data against the schema version active now, activated elsewhere', async () => {
    expect((await keyA.post(`/v1/collections/${collection}/records`, { data: { n: 1 } })).status).toBe(201);
    await ownerB.post(`/v1/collections/${collection}/schemas`, { schema: { type: 'object', required: ['title'] } });
    await ownerB.post(`/v1/collections/${collection}/schemas/1/activate`);
    expectError(await keyA.post(`/v1/collections/${collection}/records`, { data: { n: 2 } }), 422, 'SCHEMA_VALIDATION_FAILED');
    expect((await keyA.post(`/v1/collections/${collection}/records`, { data: { title: 't' } })).body.schemaVersion).toBe(1);

    // A looser version activated elsewhere: what the remembered version refuses is accepted now.
    await ownerB.post(`/v1/collections/${collection}/schemas`, { schema: { type: 'object' } });
    await ownerB.post(`/v1/collections/${collection}/schemas/2/activate`);
    const loose = await keyA.post(`/v1/collections/${collection}/records`, { data: { n: 3 } });
    expect(loose.status).toBe(201);
    expect(loose.body.schemaVersion).toBe(2);
    await ownerB.post(`/v1/collections/${collection}/schemas/2/deactivate`);
    expect((await keyA.post(`/v1/collections/${collection}/records`, { data: { n: 4 } })).body.schemaVersion).toBeNull();
  });

  it('refuses a collection put in the trash elsewhere, and writes nothing', async () => {
    const first = await keyA.post(`/v1/collections/${collection}/records`, { data: { n: 1 } });
    expect((await ownerB.delete(`/v1/collections/${collection}`)).status).toBeLessThan(300);
    const refused = expectError(await keyA.post(`/v1/collections/${collection}/records`, { data: { n: 2 } }), 404, 'NOT_FOUND');
    expect(refused.details).toEqual({ trashed: true });
    await expectWholeWrites(first.body.collectionId, 1, 1);
  });

  it('lists what is true now after the collection was renamed, replaced, re-schemaed or trashed elsewhere', async () => {
    const path = (name: string) => `/v1/collections/${name}/records?limit=10`;
    const first = await keyA.post(`/v1/collections/${collection}/records`, { data: { n: 1 } });
    expect((await keyA.get(path(collection))).body.data.map((record: { id: string }) => record.id)).toEqual([first.body.id]);
    expect((await keyA.get(path(collection))).body.data).toHaveLength(1);

    const renamed = `${collection}_renamed`;
    await ownerB.patch(`/v1/collections/${collection}`, { name: renamed });
    expectError(await keyA.get(path(collection)), 404, 'NOT_FOUND');
    expect((await keyA.get(path(renamed))).body.data).toHaveLength(1);

    // A new collection under the old name: its own (empty, then one) records, never the renamed one's.
    await ownerB.post('/v1/collections', { name: collection });
    expect((await keyA.get(path(collection))).body.data).toEqual([]);
    const second = await ownerB.post(`/v1/collections/${collection}/records`, { data: { n: 2 } });
    expect((await keyA.get(path(collection))).body.data.map((record: { id: string }) => record.id)).toEqual([second.body.id]);

    await ownerB.post(`/v1/collections/${renamed}/schemas`, { schema: { type: 'object' } });
    await ownerB.post(`/v1/collections/${renamed}/schemas/1/activate`);
    expect((await keyA.get(path(renamed))).body.data).toHaveLength(1);

    expect((await ownerB.delete(`/v1/collections/${renamed}`)).status).toBeLessThan(300);
    expect(expectError(await keyA.get(path(renamed)), 404, 'NOT_FOUND').details).toEqual({ trashed: true });
  });

  it('keeps two workspaces\' collections of the same name apart', async () => {
    const other = await inNewWorkspace(a, ownerA, 'second');
    const theirs = await other.post('/v1/collections', { name: collection });
    const ours = await ownerA.post(`/v1/collections/${collection}/records`, { data: { n: 1 } });
    for (let i = 0; i < 3; i++) {
      expect((await other.post(`/v1/collections/${collection}/records`, { data: { i } })).body.collectionId).toBe(theirs.body.id);
      expect((await ownerA.post(`/v1/collections/${collection}/records`, { data: { i } })).body.collectionId).toBe(ours.body.collectionId);
    }
    await expectWholeWrites(theirs.body.id, 3, 0);
    await expectWholeWrites(ours.body.collectionId, 4, 0);
    const listed = async (client: Client) => (await client.get(`/v1/collections/${collection}/records?limit=100`)).body.data.map((record: { collectionId: string }) => record.collectionId);
    expect(await listed(other)).toEqual([theirs.body.id, theirs.body.id, theirs.body.id]);
    expect(new Set(await listed(ownerA))).toEqual(new Set([ours.body.collectionId]));
  });

  it('loses nothing when both apps create at once, each its own way', async () => {
    const warm = await keyA.post(`/v1/collections/${collection}/records`, { data: { warm: true } });
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? keyA : ownerB).post(`/v1/collections/${collection}/records`, { data: { i } })));
    expect(replies.map((reply) => reply.status)).toEqual(replies.map(() => 201));
    await expectWholeWrites(warm.body.collectionId, 41, 21);
  });
});
