import { afterEach, beforeEach, expect, it } from 'vitest';
import { addMember, Client, expectError, inNewWorkspace, signedInOwner, type Reply } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * The contract holes of issue 14, item 9: names that read as ids, lists that took any limit,
 * cursor or query field, the 415 answer, Range past the end, and bodies silently altered
 * (invalid UTF-8, 1e400, another charset). Each list is paged in two workspaces side by side,
 * so a page never shows the neighbour's rows.
 */
describeEachEngine('API contract', (engine) => {
  let t: TestApp;
  let owner: Client & { personId: string };
  let program: Client;
  let neighbour: Client;
  let programKey: string;

  beforeEach(async () => {
    t = await startTestApp(engine, { env: 'development', webhookAllowPrivate: true });
    owner = await signedInOwner(t);
    expect((await owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
    const key = await owner.post('/v1/keys', { name: 'program', scopes: ['collections:read', 'collections:create', 'collections:update', 'records:read', 'records:create', 'schemas:read', 'schemas:write', 'files:read', 'files:write'] });
    program = keyClient(key.body.secret);
    programKey = `Bearer ${key.body.secret}`;
    // The same person's second workspace, reached with the workspace header.
    neighbour = await inNewWorkspace(t, owner, 'neighbour');
    expect((await neighbour.post('/v1/collections', { name: 'leads' })).status).toBe(201);
  });
  afterEach(async () => { await t.close(); });

  function keyClient(secret: string): Client {
    const client = new Client(t);
    const call = client.call.bind(client);
    client.call = (method, url, body, headers = {}) => call(method, url, body, { authorization: `Bearer ${secret}`, ...headers });
    return client;
  }

  it('refuses a collection name that begins with col_, on create and on rename', async () => {
    for (const client of [owner, program]) {
      for (const name of ['col_abc', 'col_', 'col_01m8a5y4sgdyvvc9ey634vccyw']) {
        const error = expectError(await client.post('/v1/collections', { name }), 400, 'INVALID_REQUEST');
        expect(error.details?.field).toBe('body.name');
        expect(error.message).toContain('col_');
      }
      expectError(await client.patch('/v1/collections/leads', { name: 'col_abc' }), 400, 'INVALID_REQUEST');
    }
    // Names that merely start alike are names.
    expect((await program.post('/v1/collections', { name: 'colour' })).status).toBe(201);
    expect((await program.post('/v1/collections', { name: 'col' })).status).toBe(201);
    expect((await program.get('/v1/collections/colour')).body.name).toBe('colour');
    expect((await owner.get('/v1/collections?limit=1000')).body.data.map((c: { name: string }) => c.name).sort()).toEqual(['col', 'colour', 'leads']);
  });

  /** Every list of the API, as its OpenAPI document says (a 200 answer with nextCursor), with a path to call it by. */
  async function everyList(): Promise<string[]> {
    const document = JSON.parse((await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).body);
    const lists: string[] = [];
    for (const [path, methods] of Object.entries<any>(document.paths)) {
      const schema = methods.get?.responses?.['200']?.content?.['application/json']?.schema;
      if (schema?.properties?.nextCursor) lists.push(path);
    }
    return lists.sort();
  }

  it('every list, management lists included, refuses a limit outside 1 to 1000, a cursor it did not make and unknown query fields', async () => {
    const webhook = await owner.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] });
    const record = await owner.post('/v1/collections/leads/records', { data: {} });
    const filled: Record<string, string> = { '{col}': 'leads', '{wh}': webhook.body.id, '{rec}': record.body.id };
    const lists = await everyList();
    expect(lists).toEqual([
      '/v1/audit-log', '/v1/auth/sessions', '/v1/backups', '/v1/collections', '/v1/collections/{col}/aggregate', '/v1/collections/{col}/files', '/v1/collections/{col}/indexes', '/v1/collections/{col}/records',
      '/v1/collections/{col}/records/{rec}/versions', '/v1/collections/{col}/schemas', '/v1/events', '/v1/invites', '/v1/keys', '/v1/members', '/v1/service-accounts', '/v1/webhooks',
      '/v1/webhooks/{wh}/deliveries', '/v1/workspaces',
    ]);
    // Positions of other lists, well encoded: a key id, a record list's JSON, a member's time and id.
    const foreign = ['key_01m8a5y4sgdyvvc9ey634vccyw', 'wh_01m8a5y4sgdyvvc9ey634vccyw', '{"s":"id","v":["rec_01m8a5y4sgdyvvc9ey634vccyw"]}', '12']
      .map((position) => Buffer.from(position).toString('base64url'));
    for (const list of lists) {
      const url = list.replace(/\{\w+\}/g, (name) => filled[name]!);
      expect((await owner.get(url)).status, url).toBe(200);
      for (const limit of ['0', '-1', '1001', '5000', '1.5', 'ten', '']) {
        const reply = await owner.get(`${url}?limit=${limit}`);
        expect(reply.status, `${url} limit=${limit}`).toBe(400);
        const error = expectError(reply, 400, 'INVALID_REQUEST');
        expect(error.details?.field, `${url} limit=${limit}`).toBe('querystring.limit');
      }
      expect((await owner.get(`${url}?limit=1000`)).status).toBe(200);
      for (const cursor of ['junk', 'bm9wZQ', '%00', ...foreign]) {
        // The one foreign cursor a list may take is its own kind's (a webhook id on the webhooks list).
        if (list === '/v1/webhooks' && cursor === foreign[1]) continue;
        if (list === '/v1/keys' && cursor === foreign[0]) continue;
        if (list === '/v1/collections/{col}/records' && cursor === foreign[2]) continue;
        if (list === '/v1/collections/{col}/schemas' && cursor === foreign[3]) continue;
        // A record's versions are paged by revision number, like schema versions.
        if (list === '/v1/collections/{col}/records/{rec}/versions' && cursor === foreign[3]) continue;
        const reply = await owner.get(`${url}?cursor=${cursor}`);
        expect(reply.status, `${url} cursor=${cursor}`).toBe(400);
        const error = expectError(reply, 400, 'INVALID_REQUEST');
        expect(error.details?.field, `${url} cursor=${cursor}`).toBe('querystring.cursor');
      }
      const unknown = expectError(await owner.get(`${url}?limt=5`), 400, 'INVALID_REQUEST');
      expect(unknown.details?.field).toBe('querystring.limt');
    }
    // Routes that take no query at all refuse one too.
    expect(expectError(await program.get('/v1/me?verbose=1'), 400, 'INVALID_REQUEST').details?.field).toBe('querystring.verbose');
    expectError(await program.post('/v1/collections?dryRun=true', { name: 'x' }), 400, 'INVALID_REQUEST');
    expect((await owner.get('/v1/collections?limit=1000')).body.data.map((c: { name: string }) => c.name)).toEqual(['leads']);
  });

  /** Every page of `url`, `limit` at a time, checking each page's size. */
  async function pages(client: Client, url: string, limit: number): Promise<unknown[][]> {
    const all: unknown[][] = [];
    let cursor: string | null = null;
    do {
      const reply: Reply = await client.get(`${url}${url.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(reply.status, url).toBe(200);
      expect(reply.body.data.length).toBeLessThanOrEqual(limit);
      all.push(reply.body.data);
      cursor = reply.body.nextCursor;
    } while (cursor);
    return all;
  }

  it('pages the management lists by cursor, in their order, each workspace its own', async () => {
    for (const [client, prefix] of [[owner, 'a'], [neighbour, 'b']] as const) {
      for (let i = 1; i <= 3; i++) {
        expect((await client.post('/v1/webhooks', { url: `http://127.0.0.1:9/${prefix}${i}`, events: ['*'] })).status).toBe(201);
        expect((await client.post('/v1/invites', { email: `${prefix}${i}@example.com`, role: 'viewer' })).status).toBe(201);
        expect((await client.post('/v1/service-accounts', { name: `${prefix}${i}`, role: 'viewer' })).status).toBe(201);
        expect((await client.post('/v1/collections/leads/schemas', { schema: { title: `${prefix}${i}` } })).status).toBe(201);
        t.clock.advance(1000);
        expect((await client.post('/v1/collections/leads/indexes', { name: `${prefix}${i}`, fields: [`data.${prefix}${i}`] })).status).toBe(201);
      }
    }
    await addMember(t, owner, 'm1@example.com', 'viewer');
    await addMember(t, owner, 'm2@example.com', 'editor');
    await owner.post('/v1/workspaces', { name: 'third' });

    const urls = (pages: unknown[][], pick: (item: any) => string) => pages.map((page) => page.map(pick));
    expect(urls(await pages(owner, '/v1/webhooks', 2), (w) => w.url)).toEqual([['http://127.0.0.1:9/a1', 'http://127.0.0.1:9/a2'], ['http://127.0.0.1:9/a3']]);
    expect(urls(await pages(neighbour, '/v1/webhooks', 2), (w) => w.url)).toEqual([['http://127.0.0.1:9/b1', 'http://127.0.0.1:9/b2'], ['http://127.0.0.1:9/b3']]);
    // Newest first; the members' invites are accepted, so no longer pending.
    expect(urls(await pages(owner, '/v1/invites', 2), (i) => i.email)).toEqual([['a3@example.com', 'a2@example.com'], ['a1@example.com']]);
    expect(urls(await pages(neighbour, '/v1/invites', 1), (i) => i.email)).toEqual([['b3@example.com'], ['b2@example.com'], ['b1@example.com']]);
    expect(urls(await pages(owner, '/v1/service-accounts', 2), (s) => s.name)).toEqual([['a1', 'a2'], ['a3']]);
    expect(urls(await pages(neighbour, '/v1/service-accounts', 3), (s) => s.name)).toEqual([['b1', 'b2', 'b3']]);
    expect(urls(await pages(owner, '/v1/collections/leads/schemas', 2), (s) => s.schema.title)).toEqual([['a3', 'a2'], ['a1']]);
    expect(urls(await pages(neighbour, '/v1/collections/leads/schemas', 2), (s) => s.schema.title)).toEqual([['b3', 'b2'], ['b1']]);
    expect(urls(await pages(owner, '/v1/collections/leads/indexes', 2), (i) => i.name)).toEqual([['a1', 'a2'], ['a3']]);
    expect(urls(await pages(neighbour, '/v1/collections/leads/indexes', 1), (i) => i.name)).toEqual([['b1'], ['b2'], ['b3']]);
    expect(urls(await pages(owner, '/v1/members', 2), (m) => m.email)).toEqual([['owner@example.com', 'm1@example.com'], ['m2@example.com']]);
    expect(urls(await pages(neighbour, '/v1/members', 2), (m) => m.email)).toEqual([['owner@example.com']]);
    expect(urls(await pages(owner, '/v1/workspaces', 2), (w) => w.name)).toEqual([['default', 'neighbour'], ['third']]);

    // A cursor of one workspace's list pages the other's after the same position, never into its rows.
    const first = await owner.get('/v1/webhooks?limit=1');
    const across = await neighbour.get(`/v1/webhooks?limit=10&cursor=${first.body.nextCursor}`);
    expect(across.body.data.every((w: { url: string }) => w.url.includes('/b'))).toBe(true);
  });

  it('answers a body of another media type 415, naming what it got and what to send', async () => {
    const webhook = await owner.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] });
    const cases: [Client, string, string, string, string][] = [
      [program, 'POST', '/v1/collections', 'name=x', 'application/x-www-form-urlencoded'],
      [program, 'POST', '/v1/collections/leads/records', 'data=1', 'application/x-www-form-urlencoded; charset=utf-8'],
      [program, 'PATCH', '/v1/collections/leads', 'public: true', 'text/yaml'],
      [program, 'POST', '/v1/collections/leads/records', '{"data":{}}', 'text/plain'],
      [owner, 'POST', `/v1/webhooks/${webhook.body.id}/disable`, 'please', 'text/plain'],
      [owner, 'POST', '/v1/invites', '<invite/>', 'application/xml'],
      [owner, 'POST', '/v1/collections/leads/records/bulk-delete', 'filter=*', 'application/x-www-form-urlencoded'],
      [owner, 'POST', '/v1/collections/leads/records/bulk-update', '{"filter":"*","patch":{}}', 'text/plain'],
    ];
    for (const [client, method, url, body, type] of cases) {
      const error = expectError(await client.call(method as 'POST', url, body, { 'content-type': type }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(error.message).toContain(JSON.stringify(type.split(';')[0]));
      expect(error.message).toContain('application/json');
      expect(error.details).toEqual({ contentType: type });
    }
    expect((await owner.get(`/v1/webhooks/${webhook.body.id}`)).body.enabled).toBe(true);
    expect((await program.get('/v1/collections/leads/records')).body.data).toEqual([]);
  });

  it('clamps a Range past the end of a file to its end (RFC 9110), as a 206', async () => {
    const file = await program.call('POST', '/v1/collections/leads/files?name=ten.txt', '0123456789', { 'content-type': 'text/plain' });
    expect(file.status).toBe(201);
    const range = (value: string) => program.get(`/v1/collections/leads/files/${file.body.id}/content`, { range: value });
    const cases: [string, number, string | undefined, string][] = [
      ['bytes=0-99999999999999999999', 206, 'bytes 0-9/10', '0123456789'],
      ['bytes=3-99999999999999999999999999999999999999', 206, 'bytes 3-9/10', '3456789'],
      ['bytes=-99999999999999999999', 206, 'bytes 0-9/10', '0123456789'],
      ['bytes=0-00000000000000000004', 206, 'bytes 0-4/10', '01234'],
      ['bytes=99999999999999999999-', 416, 'bytes */10', ''],
      ['bytes=10-', 416, 'bytes */10', ''],
    ];
    for (const [value, status, contentRange, body] of cases) {
      const reply = await range(value);
      expect(reply.status, value).toBe(status);
      expect(reply.headers['content-range'], value).toBe(contentRange);
      expect(reply.body, value).toBe(body);
    }
  });

  it('refuses bytes that are not UTF-8, numbers past the double range and other charsets, storing nothing', async () => {
    const send = async (body: Buffer | string, type = 'application/json'): Promise<Reply> => {
      // Raw bytes, as a client would send them (the Client writes strings).
      const response = await t.app.inject({ method: 'POST', url: '/v1/collections/leads/records', headers: { authorization: programKey, 'content-type': type }, payload: body });
      return { status: response.statusCode, headers: response.headers, body: JSON.parse(response.body) };
    };
    const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));
    for (const body of [
      bytes('{"data":{"name":"', [0xff], '"}}'),
      bytes('{"data":{"name":"', [0xc0, 0x80], '"}}'), // an overlong NUL
      bytes('{"data":{"name":"', [0xed, 0xa0, 0x80], '"}}'), // a surrogate written as UTF-8
      bytes('{"data":{"name":"caf', [0xc3], '"}}'), // cut inside a character
    ]) {
      const error = expectError(await send(body), 400, 'INVALID_REQUEST');
      expect(error.message).toContain('UTF-8');
    }
    for (const number of ['1e400', '-1e400', '1' + '0'.repeat(400)]) {
      const error = expectError(await send(`{"data":{"n":${number}}}`), 400, 'INVALID_REQUEST');
      expect(error.details).toEqual({ field: 'body.data.n' });
      expect(error.message).toContain('double');
    }
    for (const type of ['application/json; charset=utf-16', 'application/json; charset=UTF-16LE', 'application/json;charset="latin1"', 'application/json; charset=us-ascii']) {
      const error = expectError(await send(Buffer.from('{"data":{"n":1}}', type.includes('16') ? 'utf16le' : 'latin1'), type), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(error.message).toContain('UTF-8');
    }
    expect((await program.get('/v1/collections/leads/records')).body.data).toEqual([]);

    // What is valid goes in unchanged: the largest double, the smallest, a BOM-led body, a declared UTF-8.
    expect((await send('{"data":{"n":1.7976931348623157e308,"m":5e-324}}')).body.data).toEqual({ n: 1.7976931348623157e308, m: 5e-324 });
    expect((await send(bytes([0xef, 0xbb, 0xbf], '{"data":{"name":"café"}}'), 'application/json; charset=UTF-8')).body.data).toEqual({ name: 'café' });
    expect((await send('{"data":{"name":"ok"}}', 'application/json; charset="utf-8"')).status).toBe(201);

    // The same numbers in an import are refused per row, in NDJSON and in JSON arrays.
    const ndjson = await program.call('POST', '/v1/collections/leads/import?mode=partial', '{"n":1e400}\n{"n":2}\n', { 'content-type': 'application/x-ndjson' });
    expect(ndjson.body).toMatchObject({ imported: 1, rejectedCount: 1, rejected: [{ line: 1, error: { code: 'INVALID_REQUEST', details: { field: 'data.n' } } }] });
    const array = await program.call('POST', '/v1/collections/leads/import?mode=partial', '[{"n":-1e999},{"n":3}]', { 'content-type': 'application/json' });
    expect(array.body).toMatchObject({ imported: 1, rejectedCount: 1, rejected: [{ line: 1 }] });
    const numbers = (await program.get('/v1/collections/leads/records?filter=data.n%20%3E%201&sort=data.n')).body.data.map((r: { data: { n: number } }) => r.data.n);
    expect(numbers).toEqual([2, 3, 1.7976931348623157e308]);
  });
});
