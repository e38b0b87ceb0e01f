import { afterEach, beforeEach, expect, it } from 'vitest';
import { addMember, signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/** GET /v1/collections/{col}/files: the dashboard's file browser lists what a collection holds. */
describeEachEngine('list files', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
  });
  afterEach(async () => { await t.close(); });

  const upload = async (collection: string, name: string, text: string) => {
    const reply = await owner.post(`/v1/collections/${collection}/files?name=${name}`, text, { 'content-type': 'text/plain' });
    expect(reply.status).toBe(201);
    return reply.body.id as string;
  };

  it('lists a collection\'s files oldest first, by cursor, with how many records each is attached to', async () => {
    await owner.post('/v1/collections', { name: 'leads' });
    await owner.post('/v1/collections', { name: 'other' });
    const ids = [await upload('leads', 'a.txt', 'aaa'), await upload('leads', 'b.txt', 'bb'), await upload('leads', 'c.txt', 'c')];
    await upload('other', 'elsewhere.txt', 'x');
    for (let i = 0; i < 2; i++) {
      const record = await owner.post('/v1/collections/leads/records', { data: { i } });
      expect((await owner.post(`/v1/collections/leads/records/${record.body.id}/files`, { fileId: ids[1] })).status).toBe(200);
    }

    const first = await owner.get('/v1/collections/leads/files?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.data.map((file: any) => [file.id, file.name, file.size, file.attachedTo])).toEqual([[ids[0], 'a.txt', 3, 0], [ids[1], 'b.txt', 2, 2]]);
    expect(first.body.data[0]).toMatchObject({ contentType: 'text/plain', collectionId: expect.stringMatching(/^col_/), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const second = await owner.get(`/v1/collections/leads/files?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[2], attachedTo: 0 })], nextCursor: null });

    expect((await owner.get('/v1/collections/leads/files?cursor=bm9wZQ')).status).toBe(400);
    const viewer = await addMember(t, owner, 'viewer@example.com', 'viewer');
    expect((await viewer.get('/v1/collections/leads/files')).body.data).toHaveLength(3);
    expect((await t.app.inject({ method: 'GET', url: '/v1/collections/leads/files' })).statusCode).toBe(401);

    await owner.delete('/v1/collections/leads');
    expect((await owner.get('/v1/collections/leads/files')).status).toBe(404);
  });
});
