import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { expectError, signedInOwner, type Client, type Reply } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { expectPrototypesUntouched } from './support/untouched-prototypes.js';

/**
 * Every entry point that assigns by a caller's key or walks a caller's path (issue 14, item 1):
 * each answers exactly, and Object.prototype is untouched afterwards. One workspace is enough
 * here: what is at stake is the process (a polluted prototype reaches every tenant at once), and
 * the app runs in this test's own process, so its prototypes are the ones checked.
 */
describeEachEngine('keys named like prototype properties', (engine) => {
  let t: TestApp;
  let owner: Client;
  /** A program's key with every data scope, as the issue's reproduction used. */
  let key: Record<string, string>;

  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    expect((await owner.post('/v1/collections', { name: 'things' })).status).toBe(201);
    const created = await owner.post('/v1/keys', { name: 'program', scopes: ['records:read', 'records:create', 'records:update', 'collections:update', 'schemas:write', 'schemas:read'] });
    expect(created.status).toBe(201);
    key = { authorization: `Bearer ${created.body.secret}` };
  });
  afterEach(async () => {
    await t.close();
    expectPrototypesUntouched();
  });

  /**
   * A record as an import before this version could store it: JSON.parse keeps "__proto__" and
   * "constructor" as plain keys, and nothing refused them then.
   */
  async function storedAsBefore(text: string): Promise<string> {
    const created = await owner.post('/v1/collections/things/records', { data: { placeholder: true } });
    expect(created.status).toBe(201);
    await t.deps.db.updateTable('records').set({ data: text }).where('id', '=', created.body.id).execute();
    return created.body.id;
  }

  const POLLUTING = '{"name":"a","constructor":{"prototype":{"polluted":"YES"}},"__proto__":{"polluted":"YES"}}';

  /** The raw answer: the Client's JSON.parse would hide how "__proto__" came over the wire. */
  async function raw(url: string, headers: Record<string, string> = key): Promise<{ status: number; text: string }> {
    const response = await t.app.inject({ method: 'GET', url, headers });
    return { status: response.statusCode, text: response.body };
  }

  it('fields= picks own fields only: prototype paths are names, never assignments', async () => {
    const polluting = await storedAsBefore(POLLUTING);
    const plain = (await owner.post('/v1/collections/things/records', { data: { name: 'b' } })).body.id;

    const fields = 'data.constructor.prototype.polluted,data.__proto__.polluted,data.toString,data.hasOwnProperty.x,data.name';
    const reply = await raw(`/v1/collections/things/records?sort=data.name&fields=${fields}`);
    expect(reply.status).toBe(200);
    const page = JSON.parse(reply.text) as { data: { id: string; data: unknown }[] };
    expect(page.data.map((record) => record.id)).toEqual([polluting, plain]);
    // Exactly the picked paths, in the order asked for; toString and hasOwnProperty are nobody's fields.
    expect(JSON.stringify(page.data[0]!.data)).toBe('{"constructor":{"prototype":{"polluted":"YES"}},"__proto__":{"polluted":"YES"},"name":"a"}');
    expect(JSON.stringify(page.data[1]!.data)).toBe('{"name":"b"}');
    expectPrototypesUntouched();

    // The issue's exact request, then the request that answered 400 "body.polluted is not a known field".
    const issue = await raw('/v1/collections/things/records?fields=data.constructor.prototype.polluted');
    expect(JSON.parse(issue.text).data.map((record: { data: unknown }) => JSON.stringify(record.data))).toEqual(['{"constructor":{"prototype":{"polluted":"YES"}}}', '{}']);
    expectPrototypesUntouched();
    expect((await owner.post('/v1/workspaces', { name: 'second' })).status).toBe(201);

    // A shorter path and a longer one inside it: the whole value once, nothing written into it.
    const nested = await raw('/v1/collections/things/records?sort=data.name&fields=data.constructor,data.constructor.prototype');
    expect(JSON.stringify(JSON.parse(nested.text).data[0].data)).toBe('{"constructor":{"prototype":{"polluted":"YES"}}}');
    expectPrototypesUntouched();
  });

  it('sort and filter read own fields only, cursors included', async () => {
    const polluting = await storedAsBefore(POLLUTING);
    const named = async (data: Record<string, unknown>) => (await owner.post('/v1/collections/things/records', { data })).body.id as string;
    const b = await named({ constructor: 'b' });
    const a = await named({ constructor: 'a' });
    const none = await named({ other: 1 });

    // Missing values sort lowest; an object (the polluting record's constructor) after every scalar.
    const order: string[] = [];
    let cursor: string | null = null;
    do {
      const reply: Reply = await owner.get(`/v1/collections/things/records?sort=data.constructor&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(reply.status).toBe(200);
      order.push(...reply.body.data.map((record: { id: string }) => record.id));
      cursor = reply.body.nextCursor;
    } while (cursor);
    expect(order).toEqual([none, a, b, polluting]);

    const byPrototype = await owner.get(`/v1/collections/things/records?filter=${encodeURIComponent('data.constructor.prototype.polluted = "YES"')}`);
    expect(byPrototype.body.data.map((record: { data: Record<string, unknown> }) => record.data.name)).toEqual(['a']);
    const byToString = await owner.get(`/v1/collections/things/records?filter=${encodeURIComponent('data.toString != null || data.valueOf = 1')}`);
    expect(byToString.body.data).toEqual([]);
    const sortedByToString = await owner.get('/v1/collections/things/records?sort=-data.toString,data.__proto__.polluted&limit=2');
    expect(sortedByToString.status).toBe(200);
    expect(sortedByToString.body.nextCursor).toEqual(expect.any(String));
    const next = await owner.get(`/v1/collections/things/records?sort=-data.toString,data.__proto__.polluted&limit=2&cursor=${sortedByToString.body.nextCursor}`);
    expect(next.body.data).toHaveLength(2);
    expectPrototypesUntouched();
  });

  it('CSV and NDJSON exports name prototype-like columns as fields', async () => {
    const id = await storedAsBefore(POLLUTING);
    const csv = await raw('/v1/collections/things/export?format=csv&fields=data.constructor.prototype.polluted,data.__proto__.polluted,data.toString');
    expect(csv.status).toBe(200);
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,createdAt,updatedAt,constructor.prototype.polluted,__proto__.polluted,toString');
    expect(lines[1]).toMatch(new RegExp(`^${id},[^,]+,[^,]+,YES,YES,$`));
    expect(lines).toHaveLength(2);

    const ndjson = await raw('/v1/collections/things/export?format=ndjson');
    const data = JSON.parse(ndjson.text.trim()).data as Record<string, unknown>;
    expect(Object.keys(data).sort()).toEqual(['__proto__', 'constructor', 'name']);
    expect(JSON.stringify(data.__proto__)).toBe('{"polluted":"YES"}');
    expectPrototypesUntouched();
  });

  it('a merge patch treats constructor, toString and a stored __proto__ as fields', async () => {
    const created = await owner.post('/v1/collections/things/records', { data: { name: 'a' } }, key);
    const patched = await owner.patch(`/v1/collections/things/records/${created.body.id}`, {
      data: { constructor: { x: 1 }, toString: null, hasOwnProperty: { a: 1 }, valueOf: 'v' },
    }, key);
    expect(patched.status).toBe(200);
    expect(patched.body.data).toEqual({ name: 'a', constructor: { x: 1 }, hasOwnProperty: { a: 1 }, valueOf: 'v' });
    const again = await owner.patch(`/v1/collections/things/records/${created.body.id}`, { data: { constructor: { y: 2 }, hasOwnProperty: null } }, key);
    expect(again.body.data).toEqual({ name: 'a', constructor: { x: 1, y: 2 }, valueOf: 'v' });

    // A record stored with a "__proto__" key keeps it as a field through a merge.
    const old = await storedAsBefore(POLLUTING);
    const merged = await t.app.inject({ method: 'PATCH', url: `/v1/collections/things/records/${old}`, headers: { ...key, 'content-type': 'application/json' }, payload: '{"data":{"name":"c"}}' });
    expect(merged.statusCode).toBe(200);
    const data = JSON.parse(merged.body).data as Record<string, unknown>;
    expect(Object.keys(data).sort()).toEqual(['__proto__', 'constructor', 'name']);
    expect(JSON.stringify(data.__proto__)).toBe('{"polluted":"YES"}');
    expect(data.name).toBe('c');
    expectPrototypesUntouched();
  });

  it('refuses prototype keys in JSON bodies: records, settings, schemas, any route', async () => {
    const send = (method: 'POST' | 'PATCH', url: string, payload: string, headers: Record<string, string> = key) =>
      t.app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload }).then((response) => ({
        status: response.statusCode, headers: response.headers, body: JSON.parse(response.body),
      }));
    const cases: [ 'POST' | 'PATCH', string, string][] = [
      ['POST', '/v1/collections/things/records', '{"data":{"__proto__":{"polluted":"YES"}}}'],
      ['POST', '/v1/collections/things/records', '{"data":{"constructor":{"prototype":{"polluted":"YES"}}}}'],
      ['PATCH', '/v1/collections/things', '{"settings":{"__proto__":{"polluted":"YES"}}}'],
      ['PATCH', '/v1/collections/things', '{"settings":{"constructor":{"prototype":{"polluted":"YES"}}}}'],
      ['POST', '/v1/collections/things/schemas', '{"schema":{"type":"object","properties":{"__proto__":{"type":"string"}}}}'],
    ];
    for (const [method, url, payload] of cases) {
      const error = expectError(await send(method, url, payload), 400, 'INVALID_REQUEST');
      expect(error.message, payload).toMatch(/"__proto__"|"constructor"/);
      expectPrototypesUntouched();
    }
    // Settings take only what they know: a prototype name is an unknown field, not a lookup.
    const unknown = expectError(await send('PATCH', '/v1/collections/things', '{"settings":{"toString":"x"}}'), 400, 'INVALID_REQUEST');
    expect(unknown.details?.field).toBe('body.settings.toString');
    const session = { cookie: `plainbase_session=${owner.cookie}` };
    expectError(await send('POST', '/v1/workspaces', '{"name":"x","__proto__":{"polluted":"YES"}}', session), 400, 'INVALID_REQUEST');
    expectError(await send('POST', '/v1/workspaces', '{"name":"x","constructor":{"prototype":{"polluted":"YES"}}}', session), 400, 'INVALID_REQUEST');
    expectPrototypesUntouched();
    // What the issue saw next: any route answering 400 "body.polluted is not a known field".
    expect((await owner.post('/v1/workspaces', { name: 'after' })).status).toBe(201);
  });

  it('schemas see own fields only: required and properties are not met by the prototype', async () => {
    const schema = { type: 'object', required: ['toString', 'constructor'], properties: { constructor: { type: 'string' }, valueOf: { type: 'integer' } } };
    const version = await owner.post('/v1/collections/things/schemas', { schema }, key);
    expect(version.status).toBe(201);
    expect((await owner.post(`/v1/collections/things/schemas/${version.body.version}/activate`, undefined, key)).status).toBe(200);

    const empty = expectError(await owner.post('/v1/collections/things/records', { data: {} }, key), 422, 'SCHEMA_VALIDATION_FAILED');
    expect(empty.details?.errors).toEqual(expect.arrayContaining([{ field: 'data.toString', message: 'is required' }, { field: 'data.constructor', message: 'is required' }]));
    expectError(await owner.post('/v1/collections/things/records', { data: { toString: 1, constructor: 2 } }, key), 422, 'SCHEMA_VALIDATION_FAILED');
    const ok = await owner.post('/v1/collections/things/records', { data: { toString: 1, constructor: 'c', valueOf: 3 } }, key);
    expect(ok.status).toBe(201);
    expect(ok.body.data).toEqual({ toString: 1, constructor: 'c', valueOf: 3 });

    // A CSV import types its columns from the same schema, by own properties.
    const csv = await t.app.inject({
      method: 'POST', url: '/v1/collections/things/import', headers: { ...key, 'content-type': 'text/csv' },
      payload: 'toString,constructor,valueOf\n1,c,7\n',
    });
    expect(csv.statusCode).toBe(200);
    expect(JSON.parse(csv.body)).toMatchObject({ imported: 1, rejectedCount: 0 });
    const listed = await owner.get('/v1/collections/things/records?sort=-createdAt&limit=1', key);
    expect(listed.body.data[0].data).toEqual({ toString: '1', constructor: 'c', valueOf: 7 });
    expectPrototypesUntouched();
  });

  it('imports refuse what a JSON body refuses: the issue\'s NDJSON line, JSON array items, CSV cells', async () => {
    const importBody = (payload: string, type: string) =>
      t.app.inject({ method: 'POST', url: '/v1/collections/things/import?mode=partial', headers: { ...key, 'content-type': type }, payload }).then((response) => JSON.parse(response.body));
    const lines = ['{"constructor":{"prototype":{"polluted":"YES"}}}', '{"ok":1}', '{"a":[{"__proto__":{"polluted":"YES"}}]}', '{"b":{"constructor":{"prototype":1}}}', '{"constructor":{"x":1}}'];
    const ndjson = await importBody(`${lines.join('\n')}\n`, 'application/x-ndjson');
    expect(ndjson).toMatchObject({ imported: 2, rejectedCount: 3 });
    expect(ndjson.rejected).toEqual([
      { line: 1, error: { code: 'INVALID_REQUEST', message: 'A field named "constructor" cannot hold a field named "prototype".', details: { field: 'data' } } },
      { line: 3, error: { code: 'INVALID_REQUEST', message: 'A field cannot be named "__proto__".', details: { field: 'data.a[0]' } } },
      { line: 4, error: { code: 'INVALID_REQUEST', message: 'A field named "constructor" cannot hold a field named "prototype".', details: { field: 'data.b' } } },
    ]);
    expectPrototypesUntouched();
    // stream-json builds objects by assignment, so there "__proto__" would become the prototype.
    const array = await importBody(`[${lines.join(',')}]`, 'application/json');
    expect(array).toMatchObject({ imported: 2, rejectedCount: 3 });
    expect(array.rejected.map((row: { line: number }) => row.line)).toEqual([1, 3, 4]);
    expectPrototypesUntouched();

    const schema = await owner.post('/v1/collections/things/schemas', { schema: { type: 'object', properties: { constructor: { type: 'object' } } } });
    await owner.post(`/v1/collections/things/schemas/${schema.body.version}/activate`);
    const csv = await importBody('constructor\n"{""prototype"":{""polluted"":""YES""}}"\n"{""x"":1}"\n', 'text/csv');
    expect(csv).toMatchObject({ imported: 1, rejectedCount: 1, rejected: [{ line: 2 }] });
    const listed = await owner.get('/v1/collections/things/records?sort=-createdAt&limit=1', key);
    expect(listed.body.data[0].data).toEqual({ constructor: { x: 1 } });
    expectPrototypesUntouched();
    // Then the request the issue saw answer 200 before the process fell over.
    const fields = await raw('/v1/collections/things/records?fields=data.constructor.prototype.polluted');
    expect(fields.status).toBe(200);
    expectPrototypesUntouched();
  });

  it('a CSV import keeps prototype-like column names as fields and refuses __proto__', async () => {
    const csv = (payload: string) => t.app.inject({ method: 'POST', url: '/v1/collections/things/import', headers: { ...key, 'content-type': 'text/csv' }, payload });
    const imported = await csv('constructor,toString,hasOwnProperty,prototype\na,b,c,d\n');
    expect(JSON.parse(imported.body)).toEqual({ imported: 1, rejected: [], rejectedCount: 0 });
    const listed = await owner.get('/v1/collections/things/records', key);
    expect(listed.body.data.map((record: { data: unknown }) => record.data)).toEqual([{ constructor: 'a', toString: 'b', hasOwnProperty: 'c', prototype: 'd' }]);
    const refused = await csv('name,__proto__\na,b\n');
    expect(refused.statusCode).toBe(400);
    expect(JSON.parse(refused.body).error.message).toMatch(/__proto__/);
    expectPrototypesUntouched();
  });
});

describeEachEngine('a receiver\'s header names', (engine) => {
  let t: TestApp;
  let receiver: http.Server;
  beforeEach(async () => {
    t = await startTestApp(engine, { env: 'development', webhookAllowPrivate: true });
    receiver = http.createServer((_request, response) => {
      response.setHeader('__proto__', 'yes');
      response.setHeader('constructor', 'c');
      response.end('ok');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });
  afterEach(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await t.close();
    expectPrototypesUntouched();
  });

  // One workspace and one receiver: the delivery log is what is checked, not isolation.
  it('are logged as they came, __proto__ included, and never reach a prototype', async () => {
    const owner = await signedInOwner(t);
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const webhook = await owner.post('/v1/webhooks', { url, events: ['*'] });
    expect(webhook.status).toBe(201);
    const ping = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${webhook.body.id}/ping`, headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId! } });
    expect(ping.statusCode).toBe(200);
    const headers = JSON.parse(ping.body).responseHeaders as Record<string, string>;
    expect(Object.hasOwn(headers, '__proto__')).toBe(true);
    expect(headers.__proto__).toBe('yes');
    expect(headers.constructor).toBe('c');
    expectPrototypesUntouched();
  });
});
