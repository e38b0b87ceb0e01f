import { afterEach, beforeEach, expect, it } from 'vitest';
import { Client, expectError, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    note: { type: 'string' },
    age: { type: 'integer' },
    score: { type: 'number' },
    vip: { type: 'boolean' },
    address: { type: 'object' },
    tags: { type: 'array' },
  },
  required: ['name'],
};

/** Every kind of value a schema'd collection holds, the empty ones too, and a field the schema does not name. */
const RECORDS = [
  { name: 'Ada', note: 'likes "quotes", commas\nand line breaks', age: 36, score: 9.75, vip: true, address: { city: 'London', geo: { lat: 51.5, lon: -0.12 } }, tags: ['a', 'b'] },
  { name: 'Bo', note: '', age: 0, score: -2e-7, vip: false, address: {}, tags: [] },
  { name: 'Cy', age: -12, extra: 'not in the schema' },
  { name: '', note: 'Ünïcödé ✓ 😀', tags: [{ nested: [1, { deep: null }] }, 2, 'three'] },
];

/**
 * A collection with a schema, exported as CSV and imported back from the very file (leaving out
 * the export's id, createdAt and updatedAt): every field comes back as it was.
 */
describeEachEngine('CSV export and re-import', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
  });
  afterEach(async () => { await t?.close(); });

  async function collectionWithSchema(name: string): Promise<void> {
    expect((await owner.post('/v1/collections', { name })).status).toBe(201);
    expect((await owner.post(`/v1/collections/${name}/schemas`, { schema: SCHEMA })).status).toBe(201);
    expect((await owner.post(`/v1/collections/${name}/schemas/1/activate`)).status).toBe(200);
  }

  const importCsv = (collection: string, csv: string, query = '') =>
    owner.call('POST', `/v1/collections/${collection}/import${query}`, csv, { 'content-type': 'text/csv' });

  async function dataOf(collection: string): Promise<unknown[]> {
    const reply = await owner.get(`/v1/collections/${collection}/records?limit=100`);
    expect(reply.status).toBe(200);
    return reply.body.data.map((record: { data: unknown }) => record.data);
  }

  it('brings back every field: numbers, booleans, nested objects, arrays, empty text, empty objects and arrays, fields the schema does not name', async () => {
    await collectionWithSchema('source');
    // The extra field was stored before the schema required anything of it: schemas allow more by default.
    for (const data of RECORDS) {
      const reply = await owner.post('/v1/collections/source/records', { data });
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      t.clock.advance(1);
    }
    const exported = await owner.get('/v1/collections/source/export?format=csv');
    expect(exported.status).toBe(200);
    const csv = String(exported.body);
    // The schema's properties in its order, then the other fields found.
    expect(csv.split('\r\n')[0]).toBe('id,createdAt,updatedAt,name,note,age,score,vip,address,tags,extra');
    // An empty string is a quoted empty cell; a missing field an empty one.
    expect(csv).toContain(',Bo,"",0,');

    await collectionWithSchema('copy');
    const imported = await importCsv('copy', csv, '?skipColumns=id,createdAt,updatedAt');
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(imported.body).toEqual({ imported: RECORDS.length, rejected: [], rejectedCount: 0 });
    expect(await dataOf('copy')).toEqual(RECORDS);

    // Imported back into the same collection, the records are there twice, alike.
    expect((await importCsv('source', csv, '?skipColumns=createdAt, id ,updatedAt')).status).toBe(200);
    expect(await dataOf('source')).toEqual([...RECORDS, ...RECORDS]);
  });

  it('keeps what other CSV files meant: an empty cell leaves the field out, a quoted empty one in a typed column too', async () => {
    await collectionWithSchema('plain');
    const reply = await importCsv('plain', 'name,note,age,tags\r\nA,,,\r\nB,"","",""\r\n');
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(await dataOf('plain')).toEqual([{ name: 'A' }, { name: 'B', note: '' }]);
  });

  it('refuses skipColumns outside CSV and for a column the header does not have', async () => {
    await collectionWithSchema('plain');
    const ndjson = await owner.call('POST', '/v1/collections/plain/import?skipColumns=id', '{"name":"A"}\n', { 'content-type': 'application/x-ndjson' });
    expect(expectError(ndjson, 400, 'INVALID_REQUEST').details?.field).toBe('querystring.skipColumns');
    const missing = expectError(await importCsv('plain', 'name\r\nA\r\n', '?skipColumns=id'), 400, 'INVALID_REQUEST');
    expect(missing.message).toContain('skipColumns names "id"');
    expect(expectError(await importCsv('plain', 'name\r\nA\r\n', `?skipColumns=${'x'.repeat(2001)}`), 400, 'INVALID_REQUEST').details?.field).toBe('querystring.skipColumns');
    expect(await dataOf('plain')).toEqual([]);
  });
});
