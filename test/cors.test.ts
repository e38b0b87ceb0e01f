import { afterEach, beforeEach, expect, it } from 'vitest';
import { Client, expectError, KeyClient, signedInOwner, type Reply } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const APP = 'https://app.example.com';
const FORM = 'https://forms.example.com';
const EVIL = 'https://evil.example';

describeEachEngine('CORS', (engine) => {
  let t: TestApp;
  let owner: Client;
  let key: KeyClient;
  let formCol: string;
  beforeEach(async () => {
    t = await startTestApp(engine, { corsOrigins: [APP] });
    owner = await signedInOwner(t);
    const created = await owner.post('/v1/keys', { name: 'browser app', scopes: ['records:read', 'records:create', 'collections:read'] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    key = new KeyClient(t, created.body.secret);
    formCol = (await owner.post('/v1/collections', { name: 'signups', settings: { submissions: { enabled: true, origins: [FORM] } } })).body.id;
  });
  afterEach(async () => { await t.close(); });

  const preflight = (url: string, origin: string, method = 'GET', headers = 'authorization') =>
    new Client(t).call('OPTIONS', url, undefined, { origin, 'access-control-request-method': method, 'access-control-request-headers': headers });

  function expectAllowed(reply: Reply, origin: string): void {
    expect(reply.status, JSON.stringify(reply.body)).toBe(204);
    expect(reply.headers['access-control-allow-origin']).toBe(origin);
    expect(reply.headers['access-control-max-age']).toBe('600');
    expect(reply.headers['access-control-allow-credentials']).toBeUndefined();
  }

  it('answers a preflight of the data API for a listed origin, and refuses others (403 ORIGIN_NOT_ALLOWED)', async () => {
    for (const [url, method] of [
      ['/v1/collections', 'GET'],
      ['/v1/collections/signups/records', 'POST'],
      [`/v1/collections/${formCol}/records/rec_01jbx3q4r5s6t7v8w9x0y1z2a3`, 'PATCH'],
      ['/v1/collections/signups/files', 'GET'],
      ['/v1/collections/signups/schemas', 'GET'],
      ['/v1/events', 'GET'],
      ['/v1/events/stream', 'GET'],
    ] as const) {
      const reply = await preflight(url, APP, method, 'authorization, content-type');
      expectAllowed(reply, APP);
      expect(reply.headers['access-control-allow-methods']).toContain(method);
      expect(String(reply.headers['access-control-allow-headers'])).toContain('authorization');
      const refused = await preflight(url, EVIL, method);
      expectError(refused, 403, 'ORIGIN_NOT_ALLOWED');
      expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('never answers another origin on management routes', async () => {
    for (const url of ['/v1/keys', '/v1/members', '/v1/webhooks', '/v1/auth/sign-in', '/v1/auth/session', '/v1/workspaces', '/v1/audit-log', '/v1/invites', '/v1/service-accounts', '/v1/auth/sessions', '/v1/me']) {
      const refused = await preflight(url, APP, 'POST');
      expectError(refused, 403, 'ORIGIN_NOT_ALLOWED');
      expect(refused.headers['access-control-allow-origin'], url).toBeUndefined();
      const actual = await key.get(url, { origin: APP });
      expect(actual.headers['access-control-allow-origin'], url).toBeUndefined();
    }
  });

  it('marks actual requests of a listed origin, with the headers a page may read; not those of others', async () => {
    const created = await key.post('/v1/collections/signups/records', { data: { a: 1 } }, { origin: APP });
    expect(created.status).toBe(201);
    expect(created.headers['access-control-allow-origin']).toBe(APP);
    expect(created.headers['access-control-allow-credentials']).toBeUndefined();
    const exposed = String(created.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/);
    for (const name of ['etag', 'x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'location']) expect(exposed).toContain(name);
    expect(created.headers.vary).toBe('Origin');
    // An error is readable too, so the page can tell what went wrong.
    const missing = await key.get('/v1/collections/nothing/records', { origin: APP });
    expectError(missing, 404, 'NOT_FOUND');
    expect(missing.headers['access-control-allow-origin']).toBe(APP);

    const other = await key.get('/v1/collections/signups/records', { origin: EVIL });
    expect(other.status).toBe(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    expect(other.headers.vary).toBe('Origin');
    // Without an Origin header: the same Vary, no CORS header.
    const plain = await key.get('/v1/collections/signups/records');
    expect(plain.headers.vary).toBe('Origin');
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('lets the submission route answer its collection\'s origins, and only for POST without a key', async () => {
    const allowed = await preflight(`/v1/collections/${formCol}/records`, FORM, 'POST', 'content-type');
    expectAllowed(allowed, FORM);
    expect(allowed.headers['access-control-allow-methods']).toBe('POST');
    expect(allowed.headers['access-control-allow-headers']).toBe('content-type');
    // Not a read of it, not by name, not another collection, not another origin.
    expectError(await preflight(`/v1/collections/${formCol}/records`, FORM, 'GET'), 403, 'ORIGIN_NOT_ALLOWED');
    expectError(await preflight('/v1/collections/signups/records', FORM, 'POST'), 403, 'ORIGIN_NOT_ALLOWED');
    expectError(await preflight(`/v1/collections/${formCol}/records`, EVIL, 'POST'), 403, 'ORIGIN_NOT_ALLOWED');
    const off = (await owner.post('/v1/collections', { name: 'closed', settings: { submissions: { enabled: false, origins: [FORM] } } })).body.id;
    expectError(await preflight(`/v1/collections/${off}/records`, FORM, 'POST'), 403, 'ORIGIN_NOT_ALLOWED');
    expectError(await preflight('/v1/collections/col_00000000000000000000000000/records', FORM, 'POST'), 403, 'ORIGIN_NOT_ALLOWED');
    // A URL that is not valid is refused before anything else.
    expectError(await preflight('/v1/collections/%ZZ/records', FORM, 'POST'), 400, 'INVALID_REQUEST');

    const submitted = await new Client(t).post(`/v1/collections/${formCol}/records`, { data: {} }, { origin: FORM });
    expect(submitted.status).toBe(201);
    expect(submitted.headers['access-control-allow-origin']).toBe(FORM);
    // The form's origin does not open the rest of the data API.
    const read = await key.get(`/v1/collections/${formCol}/records`, { origin: FORM });
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('never serves a cross-origin request as the session of the cookie it carries', async () => {
    const reply = await owner.get('/v1/collections', { origin: APP });
    expectError(reply, 401, 'UNAUTHENTICATED');
    expectError(await owner.post('/v1/collections', { name: 'x' }, { origin: APP }), 403, 'FORBIDDEN');
    // The dashboard's own origin works as before; a request without Origin too.
    expect((await owner.get('/v1/collections', { origin: 'http://plainbase.test' })).status).toBe(200);
    expect((await owner.get('/v1/collections')).status).toBe(200);
    expect((await owner.post('/v1/collections', { name: 'mine' }, { origin: 'http://plainbase.test' })).status).toBe(201);
  });

  it('answers no preflight when no origin is listed', async () => {
    await t.close();
    t = await startTestApp(engine);
    expectError(await preflight('/v1/collections', APP), 403, 'ORIGIN_NOT_ALLOWED');
    // Without Access-Control-Request-Method it is no preflight: the route's usual answer (none).
    expectError(await new Client(t).call('OPTIONS', '/v1/collections', undefined, { origin: APP }), 404, 'NOT_FOUND');
  });
});
