import { afterEach, beforeEach, expect, it } from 'vitest';
import { signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/** GET /v1/collections/{col}?contents=true: what a delete for good would destroy (the dashboard names it before asking). */
describeEachEngine('collection contents', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
  });
  afterEach(async () => { await t.close(); });

  it('counts live and trashed records and files, also while the collection is in the trash, and only when asked', async () => {
    await owner.post('/v1/collections', { name: 'leads' });
    await owner.post('/v1/collections', { name: 'other' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await owner.post('/v1/collections/leads/records', { data: { i } })).body.id);
    await owner.post('/v1/collections/other/records', { data: { elsewhere: true } });
    await owner.delete(`/v1/collections/leads/records/${ids[0]}`);
    expect((await owner.post('/v1/collections/leads/files?name=a.txt', 'hello world\n', { 'content-type': 'text/plain' })).status).toBe(201);
    expect((await owner.post('/v1/collections/leads/files?name=b.txt', 'hi', { 'content-type': 'text/plain' })).status).toBe(201);

    expect((await owner.get('/v1/collections/leads')).body).not.toHaveProperty('contents');
    expect((await owner.get('/v1/collections/leads?contents=true')).body.contents).toEqual({ records: 2, trashedRecords: 1, files: 2, fileBytes: 14 });

    await owner.delete('/v1/collections/leads');
    const trashed = await owner.get('/v1/collections/leads?contents=true');
    expect(trashed.status).toBe(200);
    expect(trashed.body).toMatchObject({ name: 'leads', contents: { records: 2, trashedRecords: 1, files: 2, fileBytes: 14 } });
    expect((await owner.get('/v1/collections/other?contents=true')).body.contents).toEqual({ records: 1, trashedRecords: 0, files: 0, fileBytes: 0 });
    expect((await owner.get('/v1/collections/leads?contents=maybe')).status).toBe(400);
  });
});
