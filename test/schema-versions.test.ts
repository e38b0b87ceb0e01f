import { afterEach, beforeEach, expect, it } from 'vitest';
import { signedInOwner, type Client } from './support/client.js';
import { outbox } from './support/events.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const personSchema = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1 }, age: { type: 'integer', minimum: 0 }, email: { type: 'string', format: 'email' } },
  required: ['name'],
  additionalProperties: false,
};

describeEachEngine('schema versions', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'people' });
  });
  afterEach(async () => { await t.close(); });

  it('creates drafts that enforce nothing until activated', async () => {
    const v1 = await owner.post('/v1/collections/people/schemas', { schema: personSchema });
    expect(v1.status).toBe(201);
    expect(v1.body).toMatchObject({ version: 1, state: 'draft', schema: personSchema });
    expect((await owner.post('/v1/collections/people/records', { data: { anything: true } })).status).toBe(201);
    const v2 = await owner.post('/v1/collections/people/schemas', { schema: { type: 'object' } });
    expect(v2.body.version).toBe(2);
    const list = await owner.get('/v1/collections/people/schemas');
    expect(list.body.data.map((v: any) => v.version)).toEqual([2, 1]);
    expect((await owner.get('/v1/collections/people/schemas/1')).body.schema).toEqual(personSchema);
    expect((await owner.get('/v1/collections/people/schemas/3')).status).toBe(404);
    expect((await owner.get('/v1/collections/people/schemas/abc')).status).toBe(400);
  });

  it('enforces the active version on create and update with 422 listing each field', async () => {
    await owner.post('/v1/collections/people/schemas', { schema: personSchema });
    const activated = await owner.post('/v1/collections/people/schemas/1/activate');
    expect(activated.body.state).toBe('active');
    expect((await owner.get('/v1/collections/people')).body.activeSchemaVersion).toBe(1);

    const ok = await owner.post('/v1/collections/people/records', { data: { name: 'Ada', age: 36 } });
    expect(ok.status).toBe(201);
    expect(ok.body.schemaVersion).toBe(1);

    const bad = await owner.post('/v1/collections/people/records', { data: { age: -1, email: 'nope', colour: 'red' } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe('SCHEMA_VALIDATION_FAILED');
    const fields = bad.body.error.details.errors.map((e: any) => e.field).sort();
    expect(fields).toEqual(['data.age', 'data.colour', 'data.email', 'data.name']);

    const badPatch = await owner.patch(`/v1/collections/people/records/${ok.body.id}`, { data: { age: 'old' } });
    expect(badPatch.status).toBe(422);
    expect((await owner.get(`/v1/collections/people/records/${ok.body.id}`)).body.data).toEqual({ name: 'Ada', age: 36 });
  });

  it('activating another version switches the previous off; deactivate stops enforcement; events follow', async () => {
    await owner.post('/v1/collections/people/schemas', { schema: personSchema });
    await owner.post('/v1/collections/people/schemas', { schema: { type: 'object', required: ['title'] } });
    await owner.post('/v1/collections/people/schemas/1/activate');
    await owner.post('/v1/collections/people/schemas/2/activate');
    const versions = (await owner.get('/v1/collections/people/schemas')).body.data;
    expect(versions.map((v: any) => [v.version, v.state])).toEqual([[2, 'active'], [1, 'off']]);
    expect((await owner.post('/v1/collections/people/records', { data: { name: 'Ada' } })).status).toBe(422);

    expect((await owner.post('/v1/collections/people/schemas/1/deactivate')).status).toBe(409);
    const off = await owner.post('/v1/collections/people/schemas/2/deactivate');
    expect(off.body.state).toBe('off');
    const free = await owner.post('/v1/collections/people/records', { data: { whatever: 1 } });
    expect(free.status).toBe(201);
    expect(free.body.schemaVersion).toBeNull();

    const schemaEvents = (await outbox(t)).filter((e) => e.type === 'schema.updated').map((e) => [e.data.schema.version, e.data.schema.state]);
    expect(schemaEvents).toEqual([[1, 'active'], [1, 'off'], [2, 'active'], [2, 'off']]);
  });

  it('refuses an invalid JSON Schema with a 400 that says why', async () => {
    for (const schema of [{ type: 'strnig' }, { properties: { a: { minimum: 'x' } } }, { $ref: '#/nowhere' }]) {
      const reply = await owner.post('/v1/collections/people/schemas', { schema });
      expect(reply.status, JSON.stringify(schema)).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_REQUEST');
      expect(reply.body.error.message).toMatch(/schema/i);
    }
    expect((await owner.post('/v1/collections/people/schemas', { schema: [1] })).status).toBe(400);
    expect((await owner.get('/v1/collections/people/schemas')).body.data).toEqual([]);
  });
});
