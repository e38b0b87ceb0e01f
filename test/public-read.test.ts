import { afterEach, beforeEach, expect, it } from 'vitest';
import { Client, expectError, signedInOwner } from './support/client.js';
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
    ]) {
      const reply = await anonymous.get(url);
      expect(reply.status, url).toBe(401);
      expect(reply.body.error.code).toBe('UNAUTHENTICATED');
    }
    // By name, with the workspace named: the same 401 for the trashed, the private and the unknown.
    for (const url of [`/v1/collections/posts/records/${pubRec.id}`, `/v1/collections/private/records/${rec.id}`, `/v1/collections/nothing/records`]) {
      expectError(await anonymous.get(url, { 'x-baas-workspace': owner.workspaceId! }), 401, 'UNAUTHENTICATED');
    }
    // Made private again: anonymous reads stop at once.
    await owner.post('/v1/collections/posts/restore');
    expect((await anonymous.get(`/v1/collections/${pub.id}/records/${pubRec.id}`)).status).toBe(200);
    await owner.patch('/v1/collections/posts', { public: false });
    expect((await anonymous.get(`/v1/collections/${pub.id}/records/${pubRec.id}`)).status).toBe(401);
  });

  /**
   * docs/data-api.md, "Public collections": a name means something only inside a workspace. Two
   * workspaces each hold a collection "posts" (one public, one private) so that the answer is
   * shown to depend on nothing but what the request lacks.
   */
  it('tells an anonymous caller who names a collection without its workspace what to send (400), the same whatever exists', async () => {
    const { body: pub } = await owner.post('/v1/collections', { name: 'posts', public: true });
    const { body: rec } = await owner.post('/v1/collections/posts/records', { data: { title: 'Hello' } });
    const { body: file } = await owner.call('POST', '/v1/collections/posts/files?name=a.txt', 'hello', { 'content-type': 'text/plain' });
    expect((await owner.post(`/v1/collections/posts/records/${rec.id}/files`, { fileId: file.id })).status).toBe(200);
    const { body: other } = await owner.post('/v1/workspaces', { name: 'Other' });
    const otherOwner = new Client(t);
    otherOwner.cookie = owner.cookie;
    otherOwner.workspaceId = other.id;
    expect((await otherOwner.post('/v1/collections', { name: 'posts' })).status).toBe(201);

    const urls = [
      '/v1/collections/posts/records',
      `/v1/collections/posts/records/${rec.id}`,
      `/v1/collections/posts/files/${file.id}`,
      `/v1/collections/posts/files/${file.id}/content`,
      '/v1/collections/nothing_here/records',
    ];
    for (const url of urls) {
      for (const headers of [{}, { 'x-baas-workspace': '' }] as Record<string, string>[]) {
        const error = expectError(await anonymous.get(url, headers), 400, 'INVALID_REQUEST');
        expect(error.message, url).toMatch(/x-baas-workspace/);
        expect(error.message, url).toMatch(/col_/);
        expect(error.details).toEqual({ field: 'headers.x-baas-workspace', header: 'x-baas-workspace' });
      }
    }

    // Following the hint either way reads the public collection of that workspace.
    const byHeader = await anonymous.get('/v1/collections/posts/records', { 'x-baas-workspace': owner.workspaceId! });
    expect([byHeader.status, byHeader.body.data.map((r: { id: string }) => r.id)]).toEqual([200, [rec.id]]);
    const byId = await anonymous.get(`/v1/collections/${pub.id}/files/${file.id}/content`);
    expect([byId.status, byId.body]).toEqual([200, 'hello']);
    // The other workspace's "posts" is private: named with its workspace, the usual 401.
    expectError(await anonymous.get('/v1/collections/posts/records', { 'x-baas-workspace': other.id }), 401, 'UNAUTHENTICATED');
    // A credential carries its workspace, so the name alone is enough for it.
    expect((await owner.get('/v1/collections/posts/records', { 'x-baas-workspace': owner.workspaceId! })).status).toBe(200);
  });

  it('keeps the trash from anonymous callers: ?trashed=true, a trashed record, a trashed collection answer 401; a key reads them', async () => {
    const { body: col } = await owner.post('/v1/collections', { name: 'posts', public: true });
    const { body: live } = await owner.post('/v1/collections/posts/records', { data: { title: 'live' } });
    const { body: gone } = await owner.post('/v1/collections/posts/records', { data: { title: 'deleted, and private now' } });
    // A file each; the second goes to the trash with its record.
    const upload = async () => (await owner.call('POST', '/v1/collections/posts/files?name=a.txt', 'hello', { 'content-type': 'text/plain' })).body.id as string;
    const [shown, hidden] = [await upload(), await upload()];
    expect((await owner.post(`/v1/collections/posts/records/${live.id}/files`, { fileId: shown })).status).toBe(200);
    expect((await owner.post(`/v1/collections/posts/records/${gone.id}/files`, { fileId: hidden })).status).toBe(200);
    expect((await owner.delete(`/v1/collections/posts/records/${gone.id}`)).status).toBe(200);
    const key = (await owner.post('/v1/keys', { name: 'reader', scopes: ['records:read', 'files:read'] })).body.secret;
    const withKey = { authorization: `Bearer ${key}` };
    const byName = { 'x-baas-workspace': owner.workspaceId! };

    const refused = [
      [`/v1/collections/${col.id}/records?trashed=true`, {}],
      ['/v1/collections/posts/records?trashed=true&limit=10', byName],
      [`/v1/collections/${col.id}/records/${gone.id}?trashed=true`, {}],
      [`/v1/collections/${col.id}/records/${gone.id}`, {}],
      [`/v1/collections/posts/records/${gone.id}`, byName],
      // ?trashed=true is the trash even for a live record.
      [`/v1/collections/${col.id}/records/${live.id}?trashed=true`, {}],
    ] as const;
    for (const [url, headers] of refused) {
      const error = expectError(await anonymous.get(url, headers), 401, 'UNAUTHENTICATED');
      expect(JSON.stringify(error), url).not.toContain('deleted, and private now');
    }
    // Live records stay public, and the anonymous list never holds the trashed one.
    const list = await anonymous.get(`/v1/collections/${col.id}/records`);
    expect(list.body.data.map((record: { id: string }) => record.id)).toEqual([live.id]);
    expect((await anonymous.get(`/v1/collections/${col.id}/records/${live.id}`)).status).toBe(200);

    // With a credential the same reads answer, as before.
    expect((await anonymous.get(`/v1/collections/${col.id}/records?trashed=true`, withKey)).body.data.map((record: { id: string }) => record.id)).toEqual([gone.id]);
    expect((await anonymous.get(`/v1/collections/${col.id}/records/${gone.id}?trashed=true`, withKey)).body.data).toEqual({ title: 'deleted, and private now' });
    expectError(await anonymous.get(`/v1/collections/${col.id}/records/${gone.id}`, withKey), 404, 'NOT_FOUND');

    // A file of the live record is public; one held only by the trashed record is not there for them.
    expect((await anonymous.get(`/v1/collections/${col.id}/files/${shown}/content`)).body).toBe('hello');
    expectError(await anonymous.get(`/v1/collections/${col.id}/files/${hidden}/content`), 404, 'NOT_FOUND');

    // A public collection in the trash shows anonymous callers nothing at all.
    expect((await owner.delete('/v1/collections/posts')).status).toBe(200);
    for (const url of [
      `/v1/collections/${col.id}/records`,
      `/v1/collections/${col.id}/records/${live.id}`,
      `/v1/collections/${col.id}/records?trashed=true`,
      `/v1/collections/${col.id}/files/${shown}`,
      `/v1/collections/${col.id}/files/${shown}/content`,
    ]) {
      expectError(await anonymous.get(url), 401, 'UNAUTHENTICATED');
    }
  });
});
