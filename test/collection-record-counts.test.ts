import { afterEach, beforeEach, expect, it } from 'vitest';
import { newId } from '../src/ids.js';
import { RECORD_COUNT_CAP } from '../src/modules/collections/record-counts.js';
import { inNewWorkspace, signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/** GET /v1/collections?counts=true: each collection's live records, capped, only in its own workspace. */
describeEachEngine('record counts on the collections list', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
  });
  afterEach(async () => { await t.close(); });

  const countsOf = async (client: Client, query = '') => {
    const reply = await client.get(`/v1/collections?counts=true${query}`);
    expect(reply.status).toBe(200);
    return Object.fromEntries(reply.body.data.map((c: any) => [c.name, [c.recordCount, c.recordCountCapped]]));
  };

  it('counts live records per collection, leaves out trashed ones and other workspaces, and only when asked', async () => {
    await owner.post('/v1/collections', { name: 'leads' });
    await owner.post('/v1/collections', { name: 'empty' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await owner.post('/v1/collections/leads/records', { data: { i } })).body.id);
    await owner.delete(`/v1/collections/leads/records/${ids[0]}`);
    // Another workspace with a collection of the same name, and more records in it.
    const other = await inNewWorkspace(t, owner, 'other');
    await other.post('/v1/collections', { name: 'leads' });
    for (let i = 0; i < 5; i++) await other.post('/v1/collections/leads/records', { data: { i } });

    expect(await countsOf(owner)).toEqual({ leads: [2, false], empty: [0, false] });
    expect(await countsOf(other)).toEqual({ leads: [5, false] });
    // Paged: each page counts its own collections.
    expect(await countsOf(owner, '&limit=1&sort=-createdAt')).toEqual({ empty: [0, false] });
    const plain = await owner.get('/v1/collections');
    expect(plain.body.data[0]).not.toHaveProperty('recordCount');
    expect((await owner.get('/v1/collections?counts=maybe')).status).toBe(400);
  });

  it(`stops counting past ${RECORD_COUNT_CAP} and says so`, async () => {
    const big = (await owner.post('/v1/collections', { name: 'big' })).body;
    await owner.post('/v1/collections/big/records', { data: { first: true } });
    // The rest written straight into the table, in bulk (the API's way would take minutes).
    const now = new Date().toISOString();
    const columns = ['id', 'workspace_id', 'collection_id', 'data', 'schema_version', 'revision', 'created_at', 'updated_at', 'trashed_at'] as const;
    const values: unknown[] = [];
    for (let i = 0; i < RECORD_COUNT_CAP; i++) values.push(newId('rec'), owner.workspaceId, big.id, '{}', null, 1, now, now, null);
    await t.storage.db.transaction().execute((trx) => t.storage.dialect.prepareRows('records', columns, values).write(trx));
    expect(await countsOf(owner)).toEqual({ big: [RECORD_COUNT_CAP, true] });
    expect((await owner.get('/v1/collections/big?contents=true')).body.contents.records).toBe(RECORD_COUNT_CAP + 1);
  });
});
