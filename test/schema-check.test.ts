import { afterEach, beforeEach, expect, it } from 'vitest';
import { checkRecordsAgainstSchema } from '../src/modules/records/check-against-schema.js';
import { addMember, Client, expectError, inNewWorkspace, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const STRICT = { type: 'object', required: ['name'], properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } } };

/**
 * GET /v1/collections/{col}/schemas/{version}/check: how many live records a version would
 * refuse, before it is activated; read-only, bounded, within the caller's workspace.
 */
describeEachEngine('checking records against a schema version', (engine) => {
  let t: TestApp;
  let owner: Client;
  let neighbour: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    neighbour = await inNewWorkspace(t, owner, 'Neighbour');
  });
  afterEach(async () => { await t?.close(); });

  async function fill(client: Client, records: unknown[]): Promise<string[]> {
    const ids: string[] = [];
    for (const data of records) {
      const reply = await client.post('/v1/collections/people/records', { data });
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      ids.push(reply.body.id);
      t.clock.advance(1);
    }
    return ids;
  }

  it('counts the live records a draft would refuse, names the first few, and changes nothing', async () => {
    for (const client of [owner, neighbour]) expect((await client.post('/v1/collections', { name: 'people' })).status).toBe(201);
    const ids = await fill(owner, [{ name: 'Ada', age: 36 }, { age: 3 }, { name: 'Bo', age: -1 }, { name: 7 }, { name: 'Cy' }, { name: 'Trashed', age: 'x' }]);
    // The neighbour's records all fail, and must not count here.
    await fill(neighbour, [{ age: 'x' }, { age: 'y' }]);
    expect((await owner.delete(`/v1/collections/people/records/${ids[5]}`)).status).toBe(200);
    const draft = await owner.post('/v1/collections/people/schemas', { schema: STRICT });
    expect(draft.status).toBe(201);
    expect(draft.body.state).toBe('draft');

    const check = await owner.get(`/v1/collections/people/schemas/${draft.body.version}/check`);
    expect(check.status).toBe(200);
    expect(check.body).toEqual({
      version: draft.body.version,
      checked: 5,
      notMatching: 3,
      complete: true,
      examples: [
        { recordId: ids[1], field: 'data.name', message: 'is required' },
        { recordId: ids[2], field: 'data.age', message: 'must be >= 0' },
        { recordId: ids[3], field: 'data.name', message: 'must be string' },
      ],
    });
    // Read-only: the draft is still a draft, every record still there.
    expect((await owner.get(`/v1/collections/people/schemas/${draft.body.version}`)).body.state).toBe('draft');
    expect((await owner.get('/v1/collections/people/records?limit=10')).body.data).toHaveLength(5);

    const theirDraft = await neighbour.post('/v1/collections/people/schemas', { schema: STRICT });
    expect((await neighbour.get(`/v1/collections/people/schemas/${theirDraft.body.version}/check`)).body).toMatchObject({ checked: 2, notMatching: 2, complete: true });
  });

  it('answers 404 for another workspace’s collection or an unknown version, 400 for a bad version, 403 without records:read', async () => {
    expect((await owner.post('/v1/collections', { name: 'people' })).status).toBe(201);
    expect((await owner.post('/v1/collections/people/schemas', { schema: STRICT })).status).toBe(201);
    const collectionId = (await owner.get('/v1/collections/people')).body.id;
    expectError(await neighbour.get(`/v1/collections/${collectionId}/schemas/1/check`), 404, 'NOT_FOUND');
    expectError(await owner.get('/v1/collections/people/schemas/2/check'), 404, 'NOT_FOUND');
    for (const version of ['0', '-1', 'x', '99999999999', '1.5']) expectError(await owner.get(`/v1/collections/people/schemas/${version}/check`), 400, 'INVALID_REQUEST');

    const key = await owner.post('/v1/keys', { name: 'schemas only', scopes: ['schemas:read', 'schemas:write'] });
    const reply = await t.app.inject({ method: 'GET', url: '/v1/collections/people/schemas/1/check', headers: { authorization: `Bearer ${key.body.secret}` } });
    expect(reply.statusCode).toBe(403);
    expect(reply.json().error.code).toBe('MISSING_SCOPE');
  });

  it('lets a viewer count before an editor activates; the viewer cannot activate (403)', async () => {
    expect((await owner.post('/v1/collections', { name: 'people' })).status).toBe(201);
    await fill(owner, [{ name: 'Ada' }, { age: 3 }]);
    expect((await owner.post('/v1/collections/people/schemas', { schema: STRICT })).status).toBe(201);
    const viewer = await addMember(t, owner, 'viewer@example.com', 'viewer');
    expect((await viewer.get('/v1/collections/people/schemas/1/check')).body).toMatchObject({ checked: 2, notMatching: 1, complete: true });
    expectError(await viewer.post('/v1/collections/people/schemas/1/activate'), 403, 'FORBIDDEN');
    const editor = await addMember(t, owner, 'editor@example.com', 'editor');
    expect((await editor.get('/v1/collections/people/schemas/1/check')).body.notMatching).toBe(1);
    expect((await editor.post('/v1/collections/people/schemas/1/activate')).status).toBe(200);
    // Counting again under the active version: the same answer, nothing changed by activating.
    expect((await owner.get('/v1/collections/people/schemas/1/check')).body).toMatchObject({ checked: 2, notMatching: 1 });
  });

  it('stops at its limits and says the counts are a lower bound', async () => {
    expect((await owner.post('/v1/collections', { name: 'people' })).status).toBe(201);
    await fill(owner, [{ age: 1 }, { name: 'A' }, { age: 2 }, { age: 3 }]);
    expect((await owner.post('/v1/collections/people/schemas', { schema: STRICT })).status).toBe(201);
    const workspaceId = owner.workspaceId!;
    expect(await checkRecordsAgainstSchema(t.deps, workspaceId, 'people', 1, { maxRecords: 3, maxMilliseconds: 60_000 })).toMatchObject({ checked: 3, notMatching: 2, complete: false });
    expect(await checkRecordsAgainstSchema(t.deps, workspaceId, 'people', 1, { maxRecords: 4, maxMilliseconds: 60_000 })).toMatchObject({ checked: 4, notMatching: 3, complete: true });
    expect(await checkRecordsAgainstSchema(t.deps, workspaceId, 'people', 1, { maxRecords: 10, maxMilliseconds: -1 })).toMatchObject({ checked: 0, complete: false });
  });
});
