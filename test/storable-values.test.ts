import { afterEach, beforeEach, expect, it } from 'vitest';
import { Client, expectError, signedInOwner, type Reply } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * Every value a caller sends is checked against what both engines can store before it reaches
 * SQL (issue 14, item 12): PostgreSQL refuses NUL in text and jsonb, and its integer columns end
 * at 2^31-1, where SQLite stored or compared anything. Each case must answer the same on both
 * engines: this block runs on each, with the same expected answers. One workspace and one
 * client at a time suffice: each case is a single request refused before any SQL, so there is
 * nothing for a second tenant or a racing client to observe.
 */
describeEachEngine('values both engines store', (engine) => {
  let t: TestApp;
  let owner: Client;
  let program: Client;
  let webhookId: string;

  beforeEach(async () => {
    t = await startTestApp(engine, { env: 'development', webhookAllowPrivate: true });
    owner = await signedInOwner(t);
    expect((await owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
    const key = await owner.post('/v1/keys', { name: 'program', scopes: ['collections:read', 'collections:update', 'records:read', 'records:create', 'schemas:read', 'schemas:write', 'files:write'], collections: ['leads'] });
    program = new Client(t);
    const call = program.call.bind(program);
    program.call = (method, url, body, headers = {}) => call(method, url, body, { authorization: `Bearer ${key.body.secret}`, ...headers });
    const webhook = await owner.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] });
    webhookId = webhook.body.id;
    const schema = await owner.post('/v1/collections/leads/schemas', { schema: { type: 'object' } });
    expect(schema.body.version).toBe(1);
  });
  afterEach(async () => { await t.close(); });

  const json = (client: Client, method: string, url: string, text: string) => client.call(method as 'POST', url, text, { 'content-type': 'application/json' });

  function expectRefused(reply: Reply, field: string): void {
    const error = expectError(reply, 400, 'INVALID_REQUEST');
    expect(error.details?.field).toBe(field);
  }

  it('refuses NUL and lone surrogates in every text of a JSON body, before SQL', async () => {
    for (const bad of ['\\u0000', '\\ud800', '\\udc00x']) {
      // The PostgreSQL 500s: a webhook URL holding NUL, on create and on change.
      expectRefused(await json(owner, 'POST', '/v1/webhooks', `{"url":"https://example.com/a${bad}b","events":["*"]}`), 'body.url');
      expectRefused(await json(owner, 'PATCH', `/v1/webhooks/${webhookId}`, `{"url":"https://example.com/${bad}"}`), 'body.url');
      expectRefused(await json(owner, 'POST', '/v1/webhooks', `{"url":"https://example.com/","events":["record.created${bad}"]}`), 'body.events[0]');
      expectRefused(await json(owner, 'POST', '/v1/workspaces', `{"name":"a${bad}"}`), 'body.name');
      expectRefused(await json(owner, 'POST', '/v1/service-accounts', `{"name":"robot${bad}","role":"viewer"}`), 'body.name');
      expectRefused(await json(owner, 'POST', '/v1/keys', `{"name":"k${bad}","scopes":["records:read"]}`), 'body.name');
      expectRefused(await json(owner, 'POST', '/v1/invites', `{"email":"a${bad}@example.com","role":"viewer"}`), 'body.email');
      expectRefused(await json(program, 'PATCH', '/v1/collections/leads', `{"settings":{"description":"d${bad}"}}`), 'body.settings.description');
      expectRefused(await json(program, 'POST', '/v1/collections/leads/records', `{"data":{"k${bad}":1}}`), 'body.data');
      expectRefused(await json(program, 'POST', '/v1/collections/leads/records', `{"data":{"list":["ok","x${bad}"]}}`), 'body.data.list[1]');
      expectRefused(await json(program, 'POST', '/v1/collections/leads/schemas', `{"schema":{"const":"${bad}"}}`), 'body.schema.const');
      expectRefused(await json(new Client(t), 'POST', '/v1/auth/sign-in', `{"email":"owner@example.com","password":"p${bad}"}`), 'body.password');
    }
    // Nothing was stored on the way.
    expect((await owner.get('/v1/webhooks')).body.data).toHaveLength(1);
    expect((await owner.get(`/v1/webhooks/${webhookId}`)).body.url).toBe('http://127.0.0.1:9/hook');
    expect((await program.get('/v1/collections/leads/records')).body.data).toEqual([]);
    // An escaped backslash followed by u0000 is six characters of text, stored as such.
    const text = await json(program, 'POST', '/v1/collections/leads/records', '{"data":{"a":"\\\\u0000","pair":"\\ud83d\\ude00"}}');
    expect(text.status).toBe(201);
    expect(text.body.data).toEqual({ a: '\\u0000', pair: '😀' });
  });

  it('refuses NUL, lone surrogates and broken percent-encoding in query strings and paths', async () => {
    const queries: [string, string][] = [
      [`/v1/webhooks/${webhookId}/deliveries?eventType=%00`, 'querystring.eventType'],
      [`/v1/webhooks/${webhookId}/deliveries?eventType=record.created%ED%A0%80`, 'querystring.eventType'],
      ['/v1/audit-log?action=member.%00', 'querystring.action'],
      ['/v1/collections?cursor=%00', 'querystring.cursor'],
      ['/v1/collections/leads/records?filter=data.a%20%3D%20%22%FF%22', 'querystring.filter'],
      ['/v1/collections/leads/records?sort=data.%E2%28', 'querystring.sort'],
      ['/v1/collections/leads/records?fields=data.a%00', 'querystring.fields'],
    ];
    for (const [url, field] of queries) expectRefused(await owner.get(url), field);
    // Through a key restricted to collections, whose check looks the path's collection up first.
    for (const url of ['/v1/collections/%00/records', '/v1/collections/lea%00ds', '/v1/collections/leads/records/rec_%00']) {
      expectError(await program.get(url), 404, 'NOT_FOUND');
      expectError(await owner.get(url), 404, 'NOT_FOUND');
    }
    expectError(await owner.call('DELETE', '/v1/collections/leads/indexes/a%00'), 404, 'NOT_FOUND');
    const upload = await program.call('POST', '/v1/collections/leads/files?name=a%00.txt', 'x', { 'content-type': 'text/plain' });
    expectRefused(upload, 'querystring.name');
  });

  it('answers integers past the 32-bit columns as 400, and ones that fit but do not exist as 404', async () => {
    for (const version of ['99999999999', '2147483648', '1e10', '-1', '0', '1.5']) {
      expectRefused(await program.get(`/v1/collections/leads/schemas/${version}`), 'params.version');
      expectRefused(await program.post(`/v1/collections/leads/schemas/${version}/activate`), 'params.version');
      expectRefused(await program.post(`/v1/collections/leads/schemas/${version}/deactivate`), 'params.version');
    }
    expectError(await program.get('/v1/collections/leads/schemas/2147483647'), 404, 'NOT_FOUND');
    expectError(await program.post('/v1/collections/leads/schemas/2147483647/activate'), 404, 'NOT_FOUND');
    expect((await program.get('/v1/collections/leads/schemas/1')).status).toBe(200);
    for (const limit of ['99999999999', '2147483648', '-2147483649']) expectRefused(await program.get(`/v1/collections/leads/records?limit=${limit}`), 'querystring.limit');
    expectRefused(await json(owner, 'POST', '/v1/keys/key_01m8a5y4sgdyvvc9ey634vccyw/rotate', '{"gracePeriodSeconds":99999999999}'), 'body.gracePeriodSeconds');
  });

  it('refuses import text that is not UTF-8: the line in NDJSON, the whole body in JSON arrays and CSV', async () => {
    const send = (body: Buffer, type: string) => t.app.inject({ method: 'POST', url: '/v1/collections/leads/import?mode=partial', headers: { cookie: `plainbase_session=${(owner as Client).cookie}`, 'x-baas-workspace': owner.workspaceId!, 'content-type': type }, payload: body })
      .then((response) => ({ status: response.statusCode, body: JSON.parse(response.body) }));
    const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((part) => Buffer.from(part as string)));
    const ndjson = await send(bytes('{"a":"ok"}\n{"a":"', [0xff], '"}\n{"a":"', [0xed, 0xa0, 0x80], '"}\n{"a":"fine"}\n'), 'application/x-ndjson');
    expect(ndjson.body).toMatchObject({ imported: 2, rejectedCount: 2 });
    expect(ndjson.body.rejected.map((row: { line: number; error: { message: string } }) => [row.line, row.error.message])).toEqual([[2, 'The line is not valid UTF-8.'], [3, 'The line is not valid UTF-8.']]);
    for (const [body, type] of [[bytes('[{"a":"', [0xc3, 0x28], '"}]'), 'application/json'], [bytes('a\nok\n', [0xfe], '\n'), 'text/csv'], [bytes('a\ncaf', [0xc3]), 'text/csv']] as const) {
      const reply = await send(body, type);
      expect(reply.status, type).toBe(400);
      expect(reply.body.error.message).toContain('UTF-8');
    }
    const stored = (await owner.get('/v1/collections/leads/records')).body.data.map((record: { data: { a: string } }) => record.data.a);
    expect(stored).toEqual(['ok', 'fine']);
  });
});
