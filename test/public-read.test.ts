import { afterEach, beforeEach, expect, it } from 'vitest';
import { Client, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

describeEachEngine('public collections', (engine) => {
  let t: TestApp;
  let owner: Client;
  let anonymous: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    anonymous = new Client(t);
  });
  afterEach(async () => { await t.close(); });

  it('lets anyone read records of a public collection, and nothing else', async () => {
    const { body: col } = await owner.post('/v1/collections', { name: 'posts', public: true });
    const { body: rec } = await owner.post('/v1/collections/posts/records', { data: { title: 'Hello' } });

    const read = await anonymous.get(`/v1/collections/${col.id}/records/${rec.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual({ title: 'Hello' });
    const byName = await anonymous.get(`/v1/collections/posts/records/${rec.id}`, { 'x-baas-workspace': owner.workspaceId! });
    expect(byName.status).toBe(200);

    expect((await anonymous.post(`/v1/collections/${col.id}/records`, { data: {} })).status).toBe(401);
    expect((await anonymous.get(`/v1/collections/${col.id}`)).status).toBe(401);
    expect((await anonymous.delete(`/v1/collections/${col.id}/records/${rec.id}`)).status).toBe(401);
  });

  it('refuses a private, trashed or unknown collection with the same 401', async () => {
    const { body: priv } = await owner.post('/v1/collections', { name: 'private' });
    const { body: rec } = await owner.post('/v1/collections/private/records', { data: { secret: true } });
    const { body: pub } = await owner.post('/v1/collections', { name: 'posts', public: true });
    const { body: pubRec } = await owner.post('/v1/collections/posts/records', { data: {} });
    await owner.delete('/v1/collections/posts');

    for (const url of [
      `/v1/collections/${priv.id}/records/${rec.id}`,
      `/v1/collections/${pub.id}/records/${pubRec.id}`,
      `/v1/collections/col_00000000000000000000000000/records/${rec.id}`,
      `/v1/collections/posts/records/${pubRec.id}`,
    ]) {
      const reply = await anonymous.get(url);
      expect(reply.status, url).toBe(401);
      expect(reply.body.error.code).toBe('UNAUTHENTICATED');
    }
    // Made private again: anonymous reads stop at once.
    await owner.post('/v1/collections/posts/restore');
    expect((await anonymous.get(`/v1/collections/${pub.id}/records/${pubRec.id}`)).status).toBe(200);
    await owner.patch('/v1/collections/posts', { public: false });
    expect((await anonymous.get(`/v1/collections/${pub.id}/records/${pubRec.id}`)).status).toBe(401);
  });
});
