import { Writable } from 'node:stream';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { Client, expectError, OWNER, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/** An id that looks real but names nothing: it must never become a metrics label. */
const SOME_PERSON = 'per_01jzzzzzzzzzzzzzzzzzzzzzzz';

// One app per engine for the whole file (building one takes seconds); the test that closes the
// database comes last.
describeEachEngine('operations', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(async () => {
    await t.close();
  });

  it('GET /v1/openapi.json is a valid OpenAPI 3.1 document listing every declared route', async () => {
    const reply = await new Client(t).get('/v1/openapi.json');
    expect(reply.status).toBe(200);
    const doc = reply.body;
    expect(doc.openapi).toBe('3.1.0');

    const validator = new Validator();
    const result = await validator.validate(doc);
    if (!result.valid) console.error(JSON.stringify(result.errors, null, 2));
    expect(result.valid).toBe(true);

    const operations = new Map<string, string>();
    for (const [url, item] of Object.entries<Record<string, { operationId?: string }>>(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        expect(operation.operationId, `${method} ${url} has an operationId`).toEqual(expect.any(String));
        expect(operations.has(operation.operationId!), `operationId ${operation.operationId} is unique`).toBe(false);
        operations.set(operation.operationId!, `${method.toUpperCase()} ${url}`);
      }
    }
    // The /docs pages are the reference itself, and the dashboard's pages are HTML, not part of the API.
    const declared = t.app.declaredRoutes.filter((route) => route.operation !== 'operations.docs' && !route.operation.startsWith('dashboard.'));
    expect(declared.length).toBeGreaterThan(20);
    for (const route of declared) {
      const documented = `${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')}`;
      expect(operations.get(route.operation), `${route.method} ${route.url} (${route.operation})`).toBe(documented);
    }
  });

  it('GET /docs serves the API reference page', async () => {
    const reply = await new Client(t).get('/docs');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/html/);
    expect(reply.body).toMatch(/<html/i);
  });

  it('GET /metrics counts requests and their latency by route pattern, never by raw path', async () => {
    const client = new Client(t);
    await client.get('/healthz');
    expectError(await client.patch(`/v1/members/${SOME_PERSON}`, { role: 'viewer' }), 401, 'UNAUTHENTICATED');
    expectError(await client.get('/no/such/route'), 404, 'NOT_FOUND');

    const reply = await client.get('/metrics');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/plain/);
    const text: string = reply.body;
    expect(text).toMatch(/^plainbase_http_requests_total\{method="GET",route="\/healthz",status="200"\} [1-9]\d*$/m);
    expect(text).toMatch(/^plainbase_http_requests_total\{method="PATCH",route="\/v1\/members\/:personId",status="401"\} 1$/m);
    expect(text).toMatch(/^plainbase_http_request_duration_seconds_bucket\{le="\+Inf",method="PATCH",route="\/v1\/members\/:personId",status="401"\} 1$/m);
    // Buckets are cumulative: the largest finite bound holds the request too; count and sum agree.
    expect(text).toMatch(/^plainbase_http_request_duration_seconds_bucket\{le="10",method="PATCH",route="\/v1\/members\/:personId",status="401"\} 1$/m);
    expect(text).toMatch(/^plainbase_http_request_duration_seconds_count\{method="PATCH",route="\/v1\/members\/:personId",status="401"\} 1$/m);
    expect(text).toMatch(/^plainbase_http_request_duration_seconds_sum\{method="PATCH",route="\/v1\/members\/:personId",status="401"\} 0\.\d+/m);
    expect(text).toMatch(/^plainbase_http_requests_total\{method="GET",route="unmatched",status="404"\} [1-9]\d*$/m);
    expect(text).not.toContain(SOME_PERSON);
    expect(text).not.toContain('/no/such/route');
    // Process figures too, once per process.
    expect(text).toContain('plainbase_process_resident_memory_bytes');
  });

  it('every response carries an x-request-id, errors and 404s included', async () => {
    const client = new Client(t);
    const replies = [
      await client.get('/healthz'),
      await client.get('/metrics'),
      await client.get('/docs'),
      await client.get('/v1/openapi.json'),
      await client.get('/nowhere'),
      await client.get('/v1/members'),
      await client.call('POST', '/v1/auth/sign-in', '{not json', { 'content-type': 'application/json' }),
      await client.call('POST', '/v1/auth/sign-in', 'x', { 'content-type': 'text/plain' }),
    ];
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 404, 401, 400, 415]);
    const ids = replies.map((reply) => reply.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-z]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('logs at trace level carry no password, session, invite token or API key', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const app = await buildApp({ ...t.deps, logger: { level: 'trace', stream } });
    await app.ready();
    const logged: TestApp = { ...t, app };
    try {
      const owner = await signedInOwner(logged);
      const secrets = [OWNER.password, owner.cookie!];

      const invite = await owner.post('/v1/invites', { email: 'member@example.com', role: 'editor' });
      expect(invite.status).toBe(201);
      secrets.push(invite.body.token);
      const member = new Client(logged);
      const memberPassword = 'member secret password 9';
      secrets.push(memberPassword);
      expect((await member.post(`/v1/invites/${invite.body.token}/accept`, { name: 'Mia', password: memberPassword })).status).toBe(200);
      secrets.push(member.cookie!);

      const key = await owner.post('/v1/keys', { name: 'logging test', scopes: ['collections:read'] });
      expect(key.status).toBe(201);
      secrets.push(key.body.secret);
      expect((await new Client(logged).get('/v1/me', { authorization: `Bearer ${key.body.secret}` })).status).toBe(200);

      const forged = `pb_live_${'x'.repeat(20)}_forgedsecretvalue${'y'.repeat(30)}`;
      secrets.push(forged);
      await new Client(logged).get('/v1/collections', { authorization: `Bearer ${forged}` });
      await new Client(logged).get(`/v1/collections?token=querytokenvalue123&key=${forged}`);
      secrets.push('querytokenvalue123');
      expectError(await new Client(logged).post('/v1/auth/sign-in', { email: OWNER.email, password: 'wrong password guess 1' }), 401, 'UNAUTHENTICATED');
      secrets.push('wrong password guess 1');

      expect(lines.length).toBeGreaterThan(10);
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
      // The logs do say what happened, with the credential cut out of the URL.
      expect(lines.some((line) => line.includes('"url":"/v1/invites/[redacted]/accept"'))).toBe(true);
      for (const secret of secrets) {
        expect(secret.length).toBeGreaterThan(8);
        const leaks = lines.filter((line) => line.includes(secret));
        expect(leaks, `a log line contains ${secret.slice(0, 12)}…`).toEqual([]);
      }
    } finally {
      await app.close();
    }
  });

  // Last: it closes the database of this file's app.
  it('GET /healthz answers while the process runs; /readyz only while the database answers', async () => {
    const client = new Client(t);
    expect(await client.get('/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await client.get('/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });

    await t.storage.close();
    const notReady = await client.get('/readyz');
    expectError(notReady, 503, 'UNAVAILABLE');
    expect(await client.get('/healthz')).toMatchObject({ status: 200 });
  });
});
