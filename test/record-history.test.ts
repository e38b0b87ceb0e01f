import { afterAll, beforeAll, expect, it } from 'vitest';
import { purgeExpired } from '../src/modules/housekeeping/purge-expired.js';
import { Client, expectError, inNewWorkspace, KeyClient, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/** Record history (docs/history.md): every change keeps its version, with who, when and which request. */
describeEachEngine('record history', (engine) => {
  let t: TestApp;
  let owner: Client & { personId: string };
  let other: Client;
  let key: Client;
  let keyId = '';
  const base = '/v1/collections/notes/records';

  beforeAll(async () => {
    t = await startTestApp(engine, { historyDays: 30 });
    owner = await signedInOwner(t);
    other = await inNewWorkspace(t, owner, 'Second');
    for (const client of [owner, other]) expect((await client.post('/v1/collections', { name: 'notes' })).status).toBe(201);
    const created = await owner.post('/v1/keys', { name: 'Importer', scopes: ['records:create', 'records:read', 'records:update', 'records:delete', 'files:write'] });
    keyId = created.body.id;
    key = new KeyClient(t, created.body.secret);
  });
  afterAll(async () => t?.close());

  const versions = (client: Client, recordId: string, query = '') => client.get(`${base}/${recordId}/versions${query}`);

  it('keeps a version for each kind of change, with its actor and request id', async () => {
    const created = await key.post(base, { data: { n: 1, note: 'a' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const requests: string[] = [String(created.headers['x-request-id'])];
    const steps = [
      await owner.patch(`${base}/${id}`, { data: { n: 2 } }),
      await key.put(`${base}/${id}`, { data: { n: 3 } }),
      await owner.delete(`${base}/${id}`),
      await key.post(`${base}/${id}/restore`),
    ];
    for (const step of steps) {
      expect(step.status, JSON.stringify(step.body)).toBe(200);
      requests.push(String(step.headers['x-request-id']));
    }
    const file = await key.call('POST', '/v1/collections/notes/files?name=a.txt', 'hello', { 'content-type': 'text/plain' });
    expect(file.status).toBe(201);
    const attached = await key.post(`${base}/${id}/files`, { fileId: file.body.id });
    expect(attached.status).toBe(200);
    requests.push(String(attached.headers['x-request-id']));

    const listed = await versions(owner, id);
    expect(listed.status).toBe(200);
    expect(listed.body.nextCursor).toBeNull();
    const list = listed.body.data as any[];
    expect(list.map((version) => version.revision)).toEqual([6, 5, 4, 3, 2, 1]);
    expect(list.map((version) => version.change)).toEqual(['updated', 'restored', 'trashed', 'replaced', 'updated', 'created']);
    expect(list.map((version) => version.requestId)).toEqual([...requests].reverse());
    const asKey = { type: 'key', id: keyId, name: 'Importer' };
    const asOwner = { type: 'person', id: owner.personId, name: 'Olive Owner' };
    expect(list.map((version) => version.changedBy)).toEqual([asKey, asKey, asOwner, asKey, asOwner, asKey]);
    expect(list.map((version) => version.data)).toEqual([{ n: 3 }, { n: 3 }, { n: 3 }, { n: 3 }, { n: 2, note: 'a' }, { n: 1, note: 'a' }]);
    expect(list[0].changedAt).toBe(t.clock.now().toISOString());

    const one = await owner.get(`${base}/${id}/versions/2`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(list[4]);
    expectError(await owner.get(`${base}/${id}/versions/99`), 404, 'NOT_FOUND');
  });

  it('keeps the version of creates sent together (one shared commit on SQLite, one statement each on PostgreSQL)', async () => {
    const replies = await Promise.all(Array.from({ length: 20 }, (_, n) => key.post(base, { data: { together: n } })));
    for (const [n, reply] of replies.entries()) {
      expect(reply.status).toBe(201);
      const [version] = (await versions(owner, reply.body.id)).body.data as any[];
      expect(version).toMatchObject({ revision: 1, change: 'created', data: { together: n }, changedBy: { type: 'key', id: keyId }, requestId: reply.headers['x-request-id'] });
    }
  });

  it('names an anonymous submitter, and a file deleted from a record its deleter', async () => {
    const form = await owner.post('/v1/collections', { name: 'signups', settings: { submissions: { enabled: true, origins: ['https://example.com'] } } });
    expect(form.status).toBe(201);
    const submitted = await new Client(t).post(`/v1/collections/${form.body.id}/records`, { data: { email: 'a@example.com' } }, { origin: 'https://example.com' });
    expect(submitted.status).toBe(201);
    const [created] = (await owner.get(`/v1/collections/signups/records/${submitted.body.id}/versions`)).body.data as any[];
    expect(created).toMatchObject({ change: 'created', changedBy: { type: 'anonymous', id: null, name: null }, requestId: submitted.headers['x-request-id'] });

    const id = (await owner.post(base, { data: { n: 1 } })).body.id as string;
    const file = await key.call('POST', '/v1/collections/notes/files?name=b.txt', 'bytes', { 'content-type': 'text/plain' });
    expect((await key.post(`${base}/${id}/files`, { fileId: file.body.id })).status).toBe(200);
    const deleted = await owner.delete(`/v1/collections/notes/files/${file.body.id}`);
    expect(deleted.status).toBe(204);
    const list = (await versions(owner, id)).body.data as any[];
    expect(list.map((version) => [version.revision, version.change, version.changedBy.type])).toEqual([[3, 'updated', 'person'], [2, 'updated', 'key'], [1, 'created', 'person']]);
    expect(list[0].requestId).toBe(deleted.headers['x-request-id']);
  });

  it('pages newest first', async () => {
    const id = (await owner.post(base, { data: { n: 0 } })).body.id as string;
    for (let n = 1; n <= 4; n += 1) expect((await owner.patch(`${base}/${id}`, { data: { n } })).status).toBe(200);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const reply: any = await versions(owner, id, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(reply.status).toBe(200);
      expect(reply.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...reply.body.data.map((version: any) => version.revision));
      cursor = reply.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([5, 4, 3, 2, 1]);
    expectError(await versions(owner, id, '?cursor=bm9wZQ'), 400, 'INVALID_REQUEST');
  });

  it('restores a version as a new revision, honouring If-Match, with record.updated', async () => {
    const id = (await owner.post(base, { data: { n: 1 } })).body.id as string;
    expect((await owner.put(`${base}/${id}`, { data: { n: 2 } })).headers.etag).toBe('"2"');
    expectError(await key.post(`${base}/${id}/versions/1/restore`, {}, { 'if-match': '"1"' }), 412, 'PRECONDITION_FAILED');
    const restored = await key.post(`${base}/${id}/versions/1/restore`, {}, { 'if-match': '"2"' });
    expect(restored.status).toBe(200);
    expect(restored.headers.etag).toBe('"3"');
    expect(restored.body.data).toEqual({ n: 1 });
    const again = await owner.post(`${base}/${id}/versions/2/restore`);
    expect(again.status).toBe(200);
    expect(again.headers.etag).toBe('"4"');
    expect(again.body.data).toEqual({ n: 2 });
    const list = (await versions(owner, id)).body.data as any[];
    expect(list.slice(0, 2).map((version) => [version.revision, version.change, version.changedBy.type])).toEqual([[4, 'reverted', 'person'], [3, 'reverted', 'key']]);
    const events = await t.storage.db.selectFrom('events').select(['type', 'data']).where('type', '=', 'record.updated').execute();
    expect(events.filter((event) => String(event.data).includes(id))).toHaveLength(3);
    // The active schema applies to what is restored.
    expect((await owner.post('/v1/collections/notes/schemas', { schema: { type: 'object', properties: { n: { type: 'integer', minimum: 2 } } } })).status).toBe(201);
    expect((await owner.post('/v1/collections/notes/schemas/1/activate')).status).toBe(200);
    expectError(await owner.post(`${base}/${id}/versions/1/restore`), 422, 'SCHEMA_VALIDATION_FAILED');
    expect((await owner.post('/v1/collections/notes/schemas/1/deactivate')).status).toBe(200);
    expect((await owner.get(`${base}/${id}`)).headers.etag).toBe('"4"');
    // Restoring needs records:update.
    const reader = await owner.post('/v1/keys', { name: 'Reader', scopes: ['records:read'] });
    const readOnly = new KeyClient(t, reader.body.secret);
    expect((await versions(readOnly, id)).status).toBe(200);
    expectError(await readOnly.post(`${base}/${id}/versions/1/restore`), 403, 'MISSING_SCOPE');
  });

  it('answers 404 across workspaces, and the other workspace is untouched', async () => {
    const id = (await owner.post(base, { data: { secret: true } })).body.id as string;
    expectError(await versions(other, id), 404, 'NOT_FOUND');
    expectError(await other.get(`${base}/${id}/versions/1`), 404, 'NOT_FOUND');
    expectError(await other.post(`${base}/${id}/versions/1/restore`), 404, 'NOT_FOUND');
    const otherId = (await other.post(base, { data: { mine: true } })).body.id as string;
    expectError(await versions(owner, otherId), 404, 'NOT_FOUND');
    expect((await versions(other, otherId)).body.data.map((version: any) => version.data)).toEqual([{ mine: true }]);
    expect((await owner.get(`${base}/${id}`)).headers.etag).toBe('"1"');
  });

  it('keeps the history of imported records, and erases a record\'s history when it is deleted for good', async () => {
    const imported = await key.call('POST', '/v1/collections/notes/import', '{"i":1}\n{"i":2}\n', { 'content-type': 'application/x-ndjson' });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    const notes = (await owner.get('/v1/collections/notes')).body.id as string;
    const rows = await t.storage.db.selectFrom('records').select('id').where('workspace_id', '=', owner.workspaceId!).where('collection_id', '=', notes).execute();
    const ids = [];
    for (const row of rows) {
      const list = (await versions(owner, row.id)).body.data as any[];
      if (list.some((version) => version.data.i !== undefined)) ids.push(row.id);
    }
    expect(ids).toHaveLength(2);
    for (const id of ids) {
      const [version] = (await versions(owner, id)).body.data as any[];
      expect(version).toMatchObject({ revision: 1, change: 'created', changedBy: { type: 'key', id: keyId }, requestId: imported.headers['x-request-id'] });
    }
    const gone = ids[0]!;
    expect((await owner.delete(`${base}/${gone}?permanent=true`)).status).toBe(204);
    expect(await t.storage.db.selectFrom('record_versions').select('revision').where('record_id', '=', gone).execute()).toEqual([]);
    expect((await versions(owner, ids[1]!)).body.data).toHaveLength(1);
  });

  it('purges versions older than PLAINBASE_HISTORY_DAYS, keeping each record\'s newest', async () => {
    const id = (await owner.post(base, { data: { n: 1 } })).body.id as string;
    expect((await owner.patch(`${base}/${id}`, { data: { n: 2 } })).status).toBe(200);
    const otherId = (await other.post(base, { data: { n: 1 } })).body.id as string;
    expect((await other.patch(`${base}/${otherId}`, { data: { n: 2 } })).status).toBe(200);
    t.clock.advance(29 * 86_400_000);
    // A key, as a session would have ended by now.
    expect((await key.patch(`${base}/${id}`, { data: { n: 3 } })).status).toBe(200);
    t.clock.advance(2 * 86_400_000);
    const kept = async (recordId: string) =>
      (await t.storage.db.selectFrom('record_versions').select('revision').where('record_id', '=', recordId).orderBy('revision').execute()).map((row) => Number(row.revision));
    expect(await kept(id)).toEqual([1, 2, 3]);
    expect((await purgeExpired(t.deps)).purged.recordVersions).toBeGreaterThanOrEqual(3);
    // Revisions 1 and 2 are 31 days old and go; 3 is newer. In the other workspace, 2 is its newest.
    expect((await versions(key, id)).body.data.map((version: any) => version.revision)).toEqual([3]);
    expect(await kept(otherId)).toEqual([2]);
  });
});
