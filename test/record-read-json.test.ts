import { afterEach, beforeEach, expect, it } from 'vitest';
import { Client, expectError, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * Reads write a record's data into the answer from the JSON text the database gives (SQLite's
 * stored text, PostgreSQL's jsonb text) instead of parsing and serialising it again
 * (src/http/routes/records/record-json.ts). The answer must read back as the same value, whatever
 * the data holds (numbers too: PostgreSQL writes 1e21 out in plain decimal), on both engines; and
 * the envelope must keep RecordBody's fields and order.
 */
describeEachEngine('record reads as JSON', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'odd' });
  });
  afterEach(async () => { await t.close(); });

  const data = {
    plain: 'text with "quotes", \\ backslashes, \n newlines, \u0001 controls, é, 😀 and </script>',
    'key\nwith a newline': 1,
    '10': 'an integer-like key',
    numbers: [0, -1, 1.5, 1e21, 1e-7, 123456789012345],
    nested: { deep: [{ a: null }, [], {}], empty: '' },
    flag: false,
  };
  const expected = JSON.parse(JSON.stringify(data)) as Record<string, unknown>;

  it('answers get and list with the data exactly as serialised, in RecordBody order', async () => {
    const created = await owner.post('/v1/collections/odd/records', { data });
    expect(created.status).toBe(201);
    // Every answer keeps every key: a schema-driven serializer once dropped the one with a line break.
    expect(created.body.data).toEqual(expected);
    const id = created.body.id as string;

    const read = await owner.get(`/v1/collections/odd/records/${id}`);
    expect(read.status).toBe(200);
    expect(read.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Object.keys(read.body)).toEqual(['id', 'collectionId', 'data', 'schemaVersion', 'files', 'createdAt', 'updatedAt', 'trashedAt']);
    expect(read.body.data).toEqual(expected);
    expect(read.body.data['key\nwith a newline']).toBe(1);
    expect(read.body).toEqual({ ...created.body, data: expected });

    const listed = await owner.get('/v1/collections/odd/records?count=true');
    expect(listed.status).toBe(200);
    expect(Object.keys(listed.body)).toEqual(['data', 'nextCursor', 'total']);
    expect(listed.body).toEqual({ data: [read.body], nextCursor: null, total: 1 });

    const picked = await owner.get('/v1/collections/odd/records?fields=data.nested.empty,data.flag');
    expect(picked.body.data[0].data).toEqual({ nested: { empty: '' }, flag: false });
  });

  it('pages with the same answers whether the first page query is fresh or reused', async () => {
    for (let i = 0; i < 5; i++) await owner.post('/v1/collections/odd/records', { data: { i, status: i % 2 ? 'odd' : 'even' } });
    const url = `/v1/collections/odd/records?filter=${encodeURIComponent('data.status = "even"')}&limit=2`;
    const first = await owner.get(url);
    const again = await owner.get(url);
    expect(again.body).toEqual(first.body);
    expect(first.body.data.map((r: { data: { i: number } }) => r.data.i)).toEqual([0, 2]);
    const next = await owner.get(`${url}&cursor=${first.body.nextCursor}`);
    expect(next.body.data.map((r: { data: { i: number } }) => r.data.i)).toEqual([4]);
    expect(next.body.nextCursor).toBeNull();
    // The same filter in another collection reuses the compiled query with that collection.
    await owner.post('/v1/collections', { name: 'other' });
    await owner.post('/v1/collections/other/records', { data: { i: 9, status: 'even' } });
    const other = await owner.get(url.replace('/odd/', '/other/'));
    expect(other.body.data.map((r: { data: { i: number } }) => r.data.i)).toEqual([9]);
    // Another limit is another compiled query: the same filter, one page of three.
    const wider = await owner.get(url.replace('limit=2', 'limit=3'));
    expect(wider.body.data.map((r: { data: { i: number } }) => r.data.i)).toEqual([0, 2, 4]);
    expect(wider.body.nextCursor).toBeNull();
    expect(await owner.get(`${url.replace('limit=2', 'limit=0')}`)).toMatchObject({ status: 400 });
  });

  it('refuses a get the way it always did: unknown or trashed collection, unknown or trashed record', async () => {
    const { body: created } = await owner.post('/v1/collections/odd/records', { data: { a: 1 } });
    const byId = await owner.get(`/v1/collections/${created.collectionId}/records/${created.id}`);
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(created);

    expect(expectError(await owner.get(`/v1/collections/nope/records/${created.id}`), 404, 'NOT_FOUND').message).toMatch(/collection/);
    expect(expectError(await owner.get('/v1/collections/odd/records/rec_00000000000000000000000000'), 404, 'NOT_FOUND').message).toMatch(/record/);

    await owner.delete(`/v1/collections/odd/records/${created.id}`);
    expect(expectError(await owner.get(`/v1/collections/odd/records/${created.id}`), 404, 'NOT_FOUND').details).toEqual({ trashed: true });
    const trashedRead = await owner.get(`/v1/collections/odd/records/${created.id}?trashed=true`);
    expect(trashedRead.status).toBe(200);
    expect(trashedRead.body.trashedAt).not.toBeNull();
    expect(trashedRead.headers.etag).toBe('"2"');

    await owner.delete('/v1/collections/odd');
    const inTrash = expectError(await owner.get(`/v1/collections/odd/records/${created.id}?trashed=true`), 404, 'NOT_FOUND');
    expect(inTrash.message).toMatch(/odd is in the trash/);
    expect(inTrash.details).toEqual({ trashed: true });
  });
});
