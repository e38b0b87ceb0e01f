import { afterEach, beforeEach, expect, it } from 'vitest';
import { addMember, Client, signedInOwner } from './support/client.js';
import { outbox } from './support/events.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

describeEachEngine('records', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
  });
  afterEach(async () => { await t.close(); });

  it('creates and reads a record with its ETag, and emits record.created', async () => {
    const created = await owner.post('/v1/collections/leads/records', { data: { name: 'Ada', age: 36, tags: ['a'], nested: { x: 1 } } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ data: { name: 'Ada', age: 36, tags: ['a'], nested: { x: 1 } }, schemaVersion: null, files: [], trashedAt: null });
    expect(created.body.id).toMatch(/^rec_/);
    expect(created.headers.etag).toBe('"1"');

    const read = await owner.get(`/v1/collections/leads/records/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    expect(read.headers.etag).toBe('"1"');

    const [, event] = await outbox(t);
    expect(event).toMatchObject({ type: 'record.created', collectionId: created.body.collectionId, data: { record: { id: created.body.id, data: created.body.data } } });
  });

  it('merges with PATCH and replaces with PUT, each emitting record.updated', async () => {
    const { body: rec } = await owner.post('/v1/collections/leads/records', { data: { name: 'Ada', age: 36, address: { city: 'London', zip: 'N1' } } });
    t.clock.advance(1000);
    const merged = await owner.patch(`/v1/collections/leads/records/${rec.id}`, { data: { age: 37, address: { zip: null }, vip: true } });
    expect(merged.status).toBe(200);
    expect(merged.body.data).toEqual({ name: 'Ada', age: 37, address: { city: 'London' }, vip: true });
    expect(merged.body.updatedAt > rec.updatedAt).toBe(true);
    expect(merged.headers.etag).toBe('"2"');

    const replaced = await owner.put(`/v1/collections/leads/records/${rec.id}`, { data: { name: 'Grace' } });
    expect(replaced.body.data).toEqual({ name: 'Grace' });
    expect(replaced.headers.etag).toBe('"3"');
    expect((await owner.get(`/v1/collections/leads/records/${rec.id}`)).body.data).toEqual({ name: 'Grace' });

    const events = (await outbox(t)).filter((e) => e.type === 'record.updated');
    expect(events.map((e) => e.data.record.data)).toEqual([{ name: 'Ada', age: 37, address: { city: 'London' }, vip: true }, { name: 'Grace' }]);
  });

  it('writes nothing and emits nothing for an update that changes nothing, and still checks If-Match', async () => {
    const key = (await owner.post('/v1/keys', { name: 'writer', scopes: ['records:update'] })).body.secret as string;
    const bearer = { authorization: `Bearer ${key}` };
    const api = new Client(t);
    const { body: rec } = await owner.post('/v1/collections/leads/records', { data: { name: 'Ada', tags: ['a'], address: { city: 'London' } } });
    const events = (await outbox(t)).length;
    const audit = await t.deps.db.selectFrom('audit_log').select('id').execute();
    t.clock.advance(1000);

    const unchanged = [
      await api.patch(`/v1/collections/leads/records/${rec.id}`, { data: {} }, bearer),
      // Removing a field that is not there, and setting fields to what they are.
      await api.patch(`/v1/collections/leads/records/${rec.id}`, { data: { missing: null, name: 'Ada', address: { city: 'London' } } }, bearer),
      // The same data with its keys in another order.
      await api.put(`/v1/collections/leads/records/${rec.id}`, { data: { address: { city: 'London' }, tags: ['a'], name: 'Ada' } }, bearer),
      await owner.patch(`/v1/collections/leads/records/${rec.id}`, { data: {} }, { 'if-match': '"1"' }),
    ];
    for (const reply of unchanged) {
      expect(reply.status).toBe(200);
      expect(reply.headers.etag).toBe('"1"');
      expect(reply.body.updatedAt).toBe(rec.updatedAt);
    }
    expect(unchanged[0]!.body).toEqual({ id: rec.id, collectionId: rec.collectionId, revision: 1, files: [], createdAt: rec.createdAt, updatedAt: rec.updatedAt, trashedAt: null });
    expect((await owner.get(`/v1/collections/leads/records/${rec.id}`)).body).toEqual(rec);
    expect((await outbox(t)).length).toBe(events);
    expect(await t.deps.db.selectFrom('audit_log').select('id').execute()).toEqual(audit);
    // A stale If-Match is refused even when nothing would change.
    expect((await owner.patch(`/v1/collections/leads/records/${rec.id}`, { data: {} }, { 'if-match': '"7"' })).status).toBe(412);

    // A change is a change: a new revision and one event, and the key's answer still holds no data.
    const changed = await api.patch(`/v1/collections/leads/records/${rec.id}`, { data: { name: 'Grace' } }, bearer);
    expect(changed.headers.etag).toBe('"2"');
    expect(changed.body.data).toBeUndefined();
    expect(changed.body.revision).toBe(2);
    expect((await outbox(t)).length).toBe(events + 1);
  });

  it('If-Match: a stale ETag gets 412 and changes nothing', async () => {
    const { body: rec } = await owner.post('/v1/collections/leads/records', { data: { n: 1 } });
    const first = await owner.patch(`/v1/collections/leads/records/${rec.id}`, { data: { n: 2 } }, { 'if-match': '"1"' });
    expect(first.status).toBe(200);
    const second = await owner.patch(`/v1/collections/leads/records/${rec.id}`, { data: { n: 3 } }, { 'if-match': '"1"' });
    expect(second.status).toBe(412);
    expect(second.body.error.code).toBe('PRECONDITION_FAILED');
    expect((await owner.put(`/v1/collections/leads/records/${rec.id}`, { data: {} }, { 'if-match': '"9"' })).status).toBe(412);
    expect((await owner.delete(`/v1/collections/leads/records/${rec.id}`, { 'if-match': '"1"' })).status).toBe(412);
    expect((await owner.get(`/v1/collections/leads/records/${rec.id}`)).body.data).toEqual({ n: 2 });
  });

  it('Idempotency-Key: a repeat returns the first response and creates nothing', async () => {
    const headers = { 'idempotency-key': 'order-42' };
    const first = await owner.post('/v1/collections/leads/records', { data: { n: 1 } }, headers);
    const again = await owner.post('/v1/collections/leads/records', { data: { n: 1 } }, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const different = await owner.post('/v1/collections/leads/records', { data: { n: 2 } }, headers);
    expect(different.status).toBe(409);
    const count = await t.deps.db.selectFrom('records').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
    expect((await outbox(t)).filter((e) => e.type === 'record.created')).toHaveLength(1);
    // After 24 hours the key is forgotten.
    t.clock.advance(24 * 3600 * 1000 + 1);
    const later = await owner.post('/v1/collections/leads/records', { data: { n: 1 } }, headers);
    expect(later.body.id).not.toBe(first.body.id);
  });

  it('trash and restore a record; permanent delete is for admins and owners only', async () => {
    const { body: rec } = await owner.post('/v1/collections/leads/records', { data: { n: 1 } });
    const trashed = await owner.delete(`/v1/collections/leads/records/${rec.id}`);
    expect(trashed.status).toBe(200);
    expect(trashed.body.trashedAt).not.toBeNull();
    expect((await owner.get(`/v1/collections/leads/records/${rec.id}`)).status).toBe(404);
    expect((await owner.get(`/v1/collections/leads/records/${rec.id}?trashed=true`)).body.id).toBe(rec.id);
    expect((await owner.patch(`/v1/collections/leads/records/${rec.id}`, { data: { n: 2 } })).status).toBe(409);
    expect((await owner.delete(`/v1/collections/leads/records/${rec.id}`)).status).toBe(409);

    const restored = await owner.post(`/v1/collections/leads/records/${rec.id}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.trashedAt).toBeNull();
    expect((await owner.post(`/v1/collections/leads/records/${rec.id}/restore`)).status).toBe(409);

    const editor = await addMember(t, owner, 'editor@example.com', 'editor');
    const refused = await editor.delete(`/v1/collections/leads/records/${rec.id}?permanent=true`);
    expect(refused.status).toBe(403);
    expect((await editor.delete(`/v1/collections/leads/records/${rec.id}`)).status).toBe(200);
    expect((await owner.delete(`/v1/collections/leads/records/${rec.id}?permanent=true`)).status).toBe(204);
    expect((await owner.get(`/v1/collections/leads/records/${rec.id}?trashed=true`)).status).toBe(404);

    const types = (await outbox(t)).map((e) => e.type).slice(1);
    expect(types).toEqual(['record.created', 'record.deleted', 'record.restored', 'record.deleted']);
    const audit = await owner.get('/v1/audit-log?action=record.purged');
    expect(audit.body.data).toHaveLength(1);
  });

  it('answers bad input with the documented 4xx and never a 500', async () => {
    const { body: rec } = await owner.post('/v1/collections/leads/records', { data: { n: 1 } });
    const cases: [string, string, unknown, number, string][] = [
      ['POST', '/v1/collections/leads/records', { data: [1, 2] }, 400, 'INVALID_REQUEST'],
      ['POST', '/v1/collections/leads/records', { data: 'text' }, 400, 'INVALID_REQUEST'],
      ['POST', '/v1/collections/leads/records', { n: 1 }, 400, 'INVALID_REQUEST'],
      ['POST', '/v1/collections/leads/records', '{"data": {', 400, 'INVALID_REQUEST'],
      ['POST', '/v1/collections/nope/records', { data: {} }, 404, 'NOT_FOUND'],
      ['POST', '/v1/collections/BAD-NAME/records', { data: {} }, 400, 'INVALID_REQUEST'],
      ['GET', '/v1/collections/leads/records/rec_nope', undefined, 400, 'INVALID_REQUEST'],
      ['GET', '/v1/collections/leads/records/rec_00000000000000000000000000', undefined, 404, 'NOT_FOUND'],
      ['PATCH', `/v1/collections/leads/records/${rec.id}`, { data: {}, extra: true }, 400, 'INVALID_REQUEST'],
      ['PUT', `/v1/collections/leads/records/${rec.id}`, { data: null }, 400, 'INVALID_REQUEST'],
      // PostgreSQL cannot store NUL in jsonb; both engines refuse it the same way.
      ['POST', '/v1/collections/leads/records', '{"data": {"a": "x\\u0000y"}}', 400, 'INVALID_REQUEST'],
      ['PATCH', `/v1/collections/leads/records/${rec.id}`, '{"data": {"nested": ["\\ud800"]}}', 400, 'INVALID_REQUEST'],
    ];
    for (const [method, url, body, status, code] of cases) {
      const reply = await owner.call(method as 'GET', url, body);
      expect(reply.status, `${method} ${url} ${JSON.stringify(body)}`).toBe(status);
      expect(reply.body.error.code).toBe(code);
    }
    const big = await owner.post('/v1/collections/leads/records', { data: { blob: 'x'.repeat(t.deps.config.bodyLimitBytes) } });
    expect(big.status).toBe(413);
    const form = await owner.call('POST', '/v1/collections/leads/records', 'data=1', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
  });

  it('keeps workspaces apart', async () => {
    const { body: rec } = await owner.post('/v1/collections/leads/records', { data: { secret: 1 } });
    const stranger = new Client(t);
    const { createOwner } = await import('../src/modules/setup/first-owner.js');
    const other = await createOwner(t.deps, { email: 'other@example.com', password: 'another password' });
    await stranger.signIn('other@example.com', 'another password');
    stranger.workspaceId = other.workspace.id;
    expect((await stranger.get(`/v1/collections/${rec.collectionId}/records/${rec.id}`)).status).toBe(404);
    expect((await stranger.patch(`/v1/collections/${rec.collectionId}/records/${rec.id}`, { data: {} })).status).toBe(404);
    stranger.workspaceId = owner.workspaceId;
    expect((await stranger.get(`/v1/collections/leads/records/${rec.id}`)).status).toBe(404);
  });
});
