import { afterEach, beforeEach, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { addMember, Client, expectError, OWNER, signedInOwner, type Reply } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/** The foundation's routes, by the operation names they declare. */
const FOUNDATION = /^(auth|workspaces|members|invites|auditLog)\./;

const SAMPLE_PARAMS: Record<string, string> = {
  personId: 'per_00000000000000000000000000',
  inviteId: 'inv_00000000000000000000000000',
  token: 'some-invite-token',
};
const fillParams = (url: string) => url.replace(/:(\w+)/g, (_, name: string) => SAMPLE_PARAMS[name] ?? `unknown-${name}`);

describeEachEngine('no credential', (engine) => {
  let t: TestApp;
  beforeEach(async () => { t = await startTestApp(engine); });
  afterEach(async () => { await t?.close(); });

  const guarded = () => t.app.declaredRoutes.filter((route) => FOUNDATION.test(route.operation) && route.access.kind !== 'open');

  it('answers 401 UNAUTHENTICATED without a cookie or key, in the error envelope', async () => {
    // The walk below covers every management route of the foundation, these included.
    const names = guarded().map((route) => `${route.method} ${route.url}`).sort();
    expect(names).toEqual(expect.arrayContaining([
      'DELETE /v1/invites/:inviteId', 'DELETE /v1/members/:personId', 'GET /v1/audit-log', 'GET /v1/auth/session',
      'GET /v1/invites', 'GET /v1/members', 'GET /v1/workspaces', 'PATCH /v1/members/:personId', 'POST /v1/auth/sign-out',
      'POST /v1/invites', 'POST /v1/workspace/transfer-ownership', 'POST /v1/workspaces',
    ]));

    const anonymous = new Client(t);
    for (const route of guarded()) {
      const reply = await anonymous.call(route.method as InjectOptions['method'], fillParams(route.url), route.method === 'GET' || route.method === 'DELETE' ? undefined : {});
      const error = expectError(reply, 401, 'UNAUTHENTICATED');
      expect(Object.keys(reply.body)).toEqual(['error']);
      expect(Object.keys(error).sort()).toEqual(['code', 'message', 'requestId']);
    }
    // Naming a workspace is no credential.
    anonymous.workspaceId = 'ws_00000000000000000000000000';
    expectError(await anonymous.get('/v1/members'), 401, 'UNAUTHENTICATED');
  });

  it('answers 401 INVALID_API_KEY to a bearer token, valid-looking or not, even beside a session', async () => {
    const anonymous = new Client(t);
    const tokens = ['Bearer pb_live_0123456789abcdefghijklmnopq_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ123456', 'Bearer nonsense', 'Basic b3duZXI6cGFzcw=='];
    for (const route of guarded()) {
      for (const authorization of tokens) {
        const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
        expectError(await anonymous.call(route.method as InjectOptions['method'], fillParams(route.url), body, { authorization }), 401, 'INVALID_API_KEY');
      }
    }
    const owner = await signedInOwner(t);
    expectError(await owner.get('/v1/members', { authorization: tokens[0]! }), 401, 'INVALID_API_KEY');
  });

  it('refuses a working API key on every management route: only a signed-in person may manage (403 PERSON_REQUIRED)', async () => {
    const owner = await signedInOwner(t);
    const key = await owner.post('/v1/keys', { name: 'everything', scopes: ['collections:read', 'records:read'] });
    expect(key.status).toBe(201);
    const program = new Client(t);
    program.workspaceId = owner.workspaceId;
    const authorization = `Bearer ${key.body.secret}`;
    expect((await program.get('/v1/me', { authorization })).status).toBe(200);
    for (const route of guarded()) {
      const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
      expectError(await program.call(route.method as InjectOptions['method'], fillParams(route.url), body, { authorization }), 403, 'PERSON_REQUIRED');
    }
  });
});

describeEachEngine('cross-site requests', (engine) => {
  let t: TestApp;
  beforeEach(async () => { t = await startTestApp(engine); });
  afterEach(async () => { await t?.close(); });

  it('refuses an unsafe request from another origin, or one that is neither JSON nor names a workspace', async () => {
    const owner = await signedInOwner(t);
    const evil = { origin: 'https://evil.example' };
    expectError(await owner.post('/v1/invites', { email: 'x@example.com', role: 'viewer' }, evil), 403, 'FORBIDDEN');
    expectError(await owner.post('/v1/workspaces', { name: 'Evil' }, evil), 403, 'FORBIDDEN');
    expectError(await owner.delete(`/v1/members/${owner.personId}`, evil), 403, 'FORBIDDEN');
    expectError(await owner.post('/v1/auth/sign-out', {}, evil), 403, 'FORBIDDEN');
    // Signing in from another site is refused too (login CSRF).
    expectError(await new Client(t).post('/v1/auth/sign-in', { email: OWNER.email, password: OWNER.password }, evil), 403, 'FORBIDDEN');
    // A read from another origin is not served as the session whose cookie it carries (docs/security.md); the service's own origin is welcome.
    expectError(await owner.get('/v1/members', evil), 401, 'UNAUTHENTICATED');
    expect((await owner.get('/v1/members', { origin: 'http://plainbase.test' })).status).toBe(200);
    expect((await owner.post('/v1/invites', { email: 'x@example.com', role: 'viewer' }, { origin: 'http://plainbase.test' })).status).toBe(201);

    // A form post: no JSON content type and no workspace header.
    const workspaceId = owner.workspaceId;
    owner.workspaceId = null;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expectError(await owner.call('POST', '/v1/workspaces', 'name=Evil', form), 403, 'FORBIDDEN');
    expectError(await owner.call('POST', '/v1/auth/sign-out'), 403, 'FORBIDDEN');
    expectError(await owner.call('POST', '/v1/auth/sign-out', 'x', { 'content-type': 'text/plain' }), 403, 'FORBIDDEN');
    expect((await owner.get('/v1/workspaces')).body.data.map((w: any) => w.name)).toEqual(['default']);
    expect((await owner.get('/v1/auth/session')).status).toBe(200);

    // Either the JSON type or the header is enough.
    owner.workspaceId = workspaceId;
    expect((await owner.call('POST', '/v1/auth/sign-out')).status).toBe(204);
  });
});

interface Case {
  name: string;
  method: InjectOptions['method'];
  url: string;
  /** An object is sent as JSON; a string is sent as it is. */
  body?: unknown;
  headers?: Record<string, string>;
  status: number;
  code: string;
  /** details.field of a 400. */
  field?: string;
}

const ID = { per: 'per_00000000000000000000000000', inv: 'inv_00000000000000000000000000' };
const json = { 'content-type': 'application/json' };
const validBodies: Record<string, unknown> = {
  'POST /v1/auth/sign-in': { email: 'someone@example.com', password: 'some password' },
  'POST /v1/auth/setup': { token: 'x', email: 'someone@example.com', name: 'Someone', password: 'some password' },
  'POST /v1/workspaces': { name: 'New' },
  'POST /v1/workspace/transfer-ownership': { personId: ID.per },
  'PATCH /v1/members/:personId': { role: 'viewer' },
  'POST /v1/invites': { email: 'someone@example.com', role: 'viewer' },
  'POST /v1/invites/:token/accept': { name: 'Someone', password: 'some password' },
};

/** Malformed JSON, a non-JSON type and an unknown field, for every route that takes a body. */
function bodyCases(): Case[] {
  return Object.entries(validBodies).flatMap(([route, valid]) => {
    const [method, path] = route.split(' ') as [InjectOptions['method'], string];
    const url = fillParams(path!);
    return [
      { name: `${route}: malformed JSON`, method, url, body: '{"name": ', headers: json, status: 400, code: 'INVALID_REQUEST' },
      { name: `${route}: empty JSON body`, method, url, body: '', headers: json, status: 400, code: 'INVALID_REQUEST' },
      { name: `${route}: an array`, method, url, body: [valid], status: 400, code: 'INVALID_REQUEST', field: 'body' },
      { name: `${route}: null`, method, url, body: 'null', headers: json, status: 400, code: 'INVALID_REQUEST', field: 'body' },
      { name: `${route}: unknown field`, method, url, body: { ...(valid as object), extra: 1 }, status: 400, code: 'INVALID_REQUEST', field: 'body.extra' },
      { name: `${route}: prototype poisoning`, method, url, body: JSON.stringify(valid).replace('{', '{"__proto__": {"admin": true}, '), headers: json, status: 400, code: 'INVALID_REQUEST' },
      { name: `${route}: text/plain`, method, url, body: JSON.stringify(valid), headers: { 'content-type': 'text/plain' }, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
      { name: `${route}: form-encoded`, method, url, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
      { name: `${route}: XML`, method, url, body: '<name>x</name>', headers: { 'content-type': 'application/xml' }, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
    ];
  });
}

const long = (n: number) => 'x'.repeat(n);

/** The checklist: every route of the foundation against the input it must refuse. */
const CASES: Case[] = [
  // Sign-in
  { name: 'sign-in: email is a number', method: 'POST', url: '/v1/auth/sign-in', body: { email: 5, password: 'some password' }, status: 400, code: 'INVALID_REQUEST', field: 'body.email' },
  { name: 'sign-in: email is not an email', method: 'POST', url: '/v1/auth/sign-in', body: { email: 'owner', password: 'some password' }, status: 400, code: 'INVALID_REQUEST', field: 'body.email' },
  { name: 'sign-in: email too long', method: 'POST', url: '/v1/auth/sign-in', body: { email: `${long(250)}@example.com`, password: 'some password' }, status: 400, code: 'INVALID_REQUEST', field: 'body.email' },
  { name: 'sign-in: password missing', method: 'POST', url: '/v1/auth/sign-in', body: { email: OWNER.email }, status: 400, code: 'INVALID_REQUEST', field: 'body.password' },
  { name: 'sign-in: email missing', method: 'POST', url: '/v1/auth/sign-in', body: { password: 'x' }, status: 400, code: 'INVALID_REQUEST', field: 'body.email' },
  { name: 'sign-in: password empty', method: 'POST', url: '/v1/auth/sign-in', body: { email: OWNER.email, password: '' }, status: 400, code: 'INVALID_REQUEST', field: 'body.password' },
  { name: 'sign-in: password too long', method: 'POST', url: '/v1/auth/sign-in', body: { email: OWNER.email, password: long(1025) }, status: 400, code: 'INVALID_REQUEST', field: 'body.password' },
  { name: 'sign-in: password is an object', method: 'POST', url: '/v1/auth/sign-in', body: { email: OWNER.email, password: { $ne: '' } }, status: 400, code: 'INVALID_REQUEST', field: 'body.password' },
  // Setup
  { name: 'setup: token missing', method: 'POST', url: '/v1/auth/setup', body: { email: 'a@example.com', name: 'A', password: 'some password' }, status: 400, code: 'INVALID_REQUEST', field: 'body.token' },
  { name: 'setup: token empty', method: 'POST', url: '/v1/auth/setup', body: { token: '', email: 'a@example.com', name: 'A', password: 'some password' }, status: 400, code: 'INVALID_REQUEST', field: 'body.token' },
  { name: 'setup: name empty', method: 'POST', url: '/v1/auth/setup', body: { token: 'x', email: 'a@example.com', name: '', password: 'some password' }, status: 400, code: 'INVALID_REQUEST', field: 'body.name' },
  { name: 'setup: wrong token', method: 'POST', url: '/v1/auth/setup', body: validBodies['POST /v1/auth/setup'], status: 404, code: 'NOT_FOUND' },
  // Workspaces
  { name: 'create workspace: name missing', method: 'POST', url: '/v1/workspaces', body: {}, status: 400, code: 'INVALID_REQUEST', field: 'body.name' },
  { name: 'create workspace: name is a number', method: 'POST', url: '/v1/workspaces', body: { name: 5 }, status: 400, code: 'INVALID_REQUEST', field: 'body.name' },
  { name: 'create workspace: name empty', method: 'POST', url: '/v1/workspaces', body: { name: '' }, status: 400, code: 'INVALID_REQUEST', field: 'body.name' },
  { name: 'create workspace: name only spaces', method: 'POST', url: '/v1/workspaces', body: { name: '   ' }, status: 400, code: 'INVALID_REQUEST', field: 'body.name' },
  { name: 'create workspace: name too long', method: 'POST', url: '/v1/workspaces', body: { name: long(201) }, status: 400, code: 'INVALID_REQUEST', field: 'body.name' },
  { name: 'create workspace: name with a NUL', method: 'POST', url: '/v1/workspaces', body: { name: 'a\u0000b' }, status: 400, code: 'INVALID_REQUEST', field: 'body.name' },
  { name: 'transfer: personId missing', method: 'POST', url: '/v1/workspace/transfer-ownership', body: {}, status: 400, code: 'INVALID_REQUEST', field: 'body.personId' },
  { name: 'transfer: personId malformed', method: 'POST', url: '/v1/workspace/transfer-ownership', body: { personId: 'ws_00000000000000000000000000' }, status: 400, code: 'INVALID_REQUEST', field: 'body.personId' },
  { name: 'transfer: personId is a number', method: 'POST', url: '/v1/workspace/transfer-ownership', body: { personId: 42 }, status: 400, code: 'INVALID_REQUEST', field: 'body.personId' },
  // Members
  { name: 'update member: malformed id', method: 'PATCH', url: '/v1/members/bob', body: { role: 'viewer' }, status: 400, code: 'INVALID_REQUEST', field: 'params.personId' },
  { name: 'update member: id of another kind', method: 'PATCH', url: `/v1/members/${ID.inv}`, body: { role: 'viewer' }, status: 400, code: 'INVALID_REQUEST', field: 'params.personId' },
  { name: 'update member: role owner', method: 'PATCH', url: `/v1/members/${ID.per}`, body: { role: 'owner' }, status: 400, code: 'INVALID_REQUEST', field: 'body.role' },
  { name: 'update member: role unknown', method: 'PATCH', url: `/v1/members/${ID.per}`, body: { role: 'superuser' }, status: 400, code: 'INVALID_REQUEST', field: 'body.role' },
  { name: 'update member: role missing', method: 'PATCH', url: `/v1/members/${ID.per}`, body: {}, status: 400, code: 'INVALID_REQUEST', field: 'body.role' },
  { name: 'update member: no such member', method: 'PATCH', url: `/v1/members/${ID.per}`, body: { role: 'viewer' }, status: 404, code: 'NOT_FOUND' },
  { name: 'remove member: malformed id', method: 'DELETE', url: '/v1/members/per_123', status: 400, code: 'INVALID_REQUEST', field: 'params.personId' },
  { name: 'remove member: upper-case id', method: 'DELETE', url: `/v1/members/${ID.per.toUpperCase()}`, status: 400, code: 'INVALID_REQUEST', field: 'params.personId' },
  // Invites
  { name: 'invite: email is a number', method: 'POST', url: '/v1/invites', body: { email: 5, role: 'viewer' }, status: 400, code: 'INVALID_REQUEST', field: 'body.email' },
  { name: 'invite: email is not an email', method: 'POST', url: '/v1/invites', body: { email: 'not-an-email', role: 'viewer' }, status: 400, code: 'INVALID_REQUEST', field: 'body.email' },
  { name: 'invite: email missing', method: 'POST', url: '/v1/invites', body: { role: 'viewer' }, status: 400, code: 'INVALID_REQUEST', field: 'body.email' },
  { name: 'invite: role missing', method: 'POST', url: '/v1/invites', body: { email: 'a@example.com' }, status: 400, code: 'INVALID_REQUEST', field: 'body.role' },
  { name: 'invite: role owner', method: 'POST', url: '/v1/invites', body: { email: 'a@example.com', role: 'owner' }, status: 400, code: 'INVALID_REQUEST', field: 'body.role' },
  { name: 'invite: role in capitals', method: 'POST', url: '/v1/invites', body: { email: 'a@example.com', role: 'ADMIN' }, status: 400, code: 'INVALID_REQUEST', field: 'body.role' },
  { name: 'revoke invite: malformed id', method: 'DELETE', url: '/v1/invites/123', status: 400, code: 'INVALID_REQUEST', field: 'params.inviteId' },
  { name: 'revoke invite: no such invite', method: 'DELETE', url: `/v1/invites/${ID.inv}`, status: 404, code: 'NOT_FOUND' },
  { name: 'accept invite: password missing', method: 'POST', url: '/v1/invites/some-token/accept', body: { name: 'A' }, status: 400, code: 'INVALID_REQUEST', field: 'body.password' },
  { name: 'accept invite: name is a number', method: 'POST', url: '/v1/invites/some-token/accept', body: { name: 5, password: 'some password' }, status: 400, code: 'INVALID_REQUEST', field: 'body.name' },
  { name: 'accept invite: unknown token', method: 'POST', url: '/v1/invites/some-token/accept', body: { name: 'A', password: 'some password' }, status: 404, code: 'NOT_FOUND' },
  { name: 'accept invite: NUL token', method: 'POST', url: '/v1/invites/%00/accept', body: { name: 'A', password: 'some password' }, status: 404, code: 'NOT_FOUND' },
  // Audit log
  { name: 'audit: limit 0', method: 'GET', url: '/v1/audit-log?limit=0', status: 400, code: 'INVALID_REQUEST', field: 'querystring.limit' },
  { name: 'audit: limit over 1000', method: 'GET', url: '/v1/audit-log?limit=1001', status: 400, code: 'INVALID_REQUEST', field: 'querystring.limit' },
  { name: 'audit: limit not a number', method: 'GET', url: '/v1/audit-log?limit=ten', status: 400, code: 'INVALID_REQUEST', field: 'querystring.limit' },
  { name: 'audit: limit not whole', method: 'GET', url: '/v1/audit-log?limit=2.5', status: 400, code: 'INVALID_REQUEST', field: 'querystring.limit' },
  { name: 'audit: cursor junk', method: 'GET', url: '/v1/audit-log?cursor=not-a-cursor!', status: 400, code: 'INVALID_REQUEST', field: 'querystring.cursor' },
  { name: 'audit: cursor of something else', method: 'GET', url: `/v1/audit-log?cursor=${Buffer.from('hello').toString('base64url')}`, status: 400, code: 'INVALID_REQUEST', field: 'querystring.cursor' },
  { name: 'audit: cursor too long', method: 'GET', url: `/v1/audit-log?cursor=${long(201)}`, status: 400, code: 'INVALID_REQUEST', field: 'querystring.cursor' },
  { name: 'audit: since not a time', method: 'GET', url: '/v1/audit-log?since=yesterday', status: 400, code: 'INVALID_REQUEST', field: 'querystring.since' },
  { name: 'audit: since without a zone', method: 'GET', url: '/v1/audit-log?since=2026-11-22T10:00:00', status: 400, code: 'INVALID_REQUEST', field: 'querystring.since' },
  { name: 'audit: since a leap second', method: 'GET', url: '/v1/audit-log?since=2016-12-31T23:59:60Z', status: 400, code: 'INVALID_REQUEST', field: 'querystring.since' },
  { name: 'audit: until not a time', method: 'GET', url: '/v1/audit-log?until=2026-13-45', status: 400, code: 'INVALID_REQUEST', field: 'querystring.until' },
  { name: 'audit: action with capitals', method: 'GET', url: '/v1/audit-log?action=Member.*', status: 400, code: 'INVALID_REQUEST', field: 'querystring.action' },
  { name: 'audit: action with a star inside', method: 'GET', url: '/v1/audit-log?action=me*ber', status: 400, code: 'INVALID_REQUEST', field: 'querystring.action' },
  { name: 'audit: actor with a NUL', method: 'GET', url: '/v1/audit-log?actor=per_%00', status: 400, code: 'INVALID_REQUEST', field: 'querystring.actor' },
  { name: 'audit: unknown parameter', method: 'GET', url: '/v1/audit-log?sort=at', status: 400, code: 'INVALID_REQUEST', field: 'querystring.sort' },
  // Unknown routes and methods
  { name: 'unknown route', method: 'GET', url: '/v1/nothing-here', status: 404, code: 'NOT_FOUND' },
  { name: 'unknown version', method: 'GET', url: '/v2/members', status: 404, code: 'NOT_FOUND' },
  { name: 'unknown sub-route', method: 'GET', url: `/v1/members/${ID.per}`, status: 404, code: 'NOT_FOUND' },
  { name: 'unknown method on a list', method: 'PUT', url: '/v1/members', body: {}, status: 404, code: 'NOT_FOUND' },
  { name: 'unknown method on workspaces', method: 'DELETE', url: '/v1/workspaces', status: 404, code: 'NOT_FOUND' },
  { name: 'unknown method on the session', method: 'DELETE', url: '/v1/auth/session', status: 404, code: 'NOT_FOUND' },
  { name: 'GET of an action', method: 'GET', url: '/v1/invites/some-token/accept', status: 404, code: 'NOT_FOUND' },
  { name: 'OPTIONS', method: 'OPTIONS', url: '/v1/members', status: 404, code: 'NOT_FOUND' },
  ...bodyCases(),
];

/** URLs the router itself refuses, before any route runs. */
const URL_CASES: Case[] = [
  { name: 'accept invite: token too long', method: 'POST', url: `/v1/invites/${long(201)}/accept`, body: { name: 'A', password: 'some password' }, status: 400, code: 'INVALID_REQUEST', field: 'url' },
  { name: 'remove member: id far too long', method: 'DELETE', url: `/v1/members/per_${long(150)}`, status: 400, code: 'INVALID_REQUEST', field: 'url' },
  { name: 'accept invite: bad percent-encoding', method: 'POST', url: '/v1/invites/%00%ff%2F/accept', body: { name: 'A', password: 'some password' }, status: 400, code: 'INVALID_REQUEST', field: 'url' },
  { name: 'update member: bad percent-encoding', method: 'PATCH', url: '/v1/members/%E0%A4%A', body: { role: 'viewer' }, status: 400, code: 'INVALID_REQUEST', field: 'url' },
];

/** Sends each case and lists every mismatch, so one run shows the whole checklist's state. */
async function mismatches(client: Client, cases: Case[]): Promise<string[]> {
  const failures: string[] = [];
  for (const c of cases) {
    const reply = await client.call(c.method, c.url, c.body, c.headers);
    const got = { status: reply.status, code: reply.body?.error?.code, field: reply.body?.error?.details?.field };
    const want = { status: c.status, code: c.code, field: c.field };
    if (got.status !== want.status || got.code !== want.code || (c.field !== undefined && got.field !== want.field)) {
      failures.push(`${c.name}: want ${JSON.stringify(want)}, got ${JSON.stringify(got)} ${JSON.stringify(reply.body).slice(0, 200)}`);
      continue;
    }
    expectError(reply, c.status, c.code);
  }
  return failures;
}

describeEachEngine('bad input', (engine) => {
  let t: TestApp;
  beforeEach(async () => { t = await startTestApp(engine); });
  afterEach(async () => { await t?.close(); });

  it('refuses every case of the checklist with the right status, code and field', async () => {
    const owner = await signedInOwner(t);
    expect(await mismatches(owner, CASES)).toEqual([]);
    // None of it changed anything.
    expect((await owner.get('/v1/workspaces')).body.data).toHaveLength(1);
    expect((await owner.get('/v1/members')).body.data).toHaveLength(1);
    expect((await owner.get('/v1/invites')).body.data).toEqual([]);
  });

  it('answers URLs the router refuses in the same envelope, with a request id', async () => {
    const owner = await signedInOwner(t);
    expect(await mismatches(owner, URL_CASES)).toEqual([]);
  });

  it('refuses a body over the limit with 413 on every route that takes one', async () => {
    const owner = await signedInOwner(t);
    const limit = t.deps.config.bodyLimitBytes;
    for (const [route, valid] of Object.entries(validBodies)) {
      const [method, path] = route.split(' ') as [InjectOptions['method'], string];
      const padded = JSON.stringify({ ...(valid as object), name: long(limit) });
      expect(padded.length).toBeGreaterThan(limit);
      expectError(await owner.call(method, fillParams(path), padded), 413, 'PAYLOAD_TOO_LARGE');
    }
    // Just under the limit is parsed (and then refused for what it says, not for its size).
    const under = JSON.stringify({ name: long(limit - 20) });
    expect(under.length).toBeLessThanOrEqual(limit);
    expectError(await owner.call('POST', '/v1/workspaces', under), 400, 'INVALID_REQUEST');
  });

  it('answers an admin\'s odd requests without a 500 and always with a request id', async () => {
    const owner = await signedInOwner(t);
    const admin = await addMember(t, owner, 'admin@example.com', 'admin');
    const odd: unknown[] = [
      '{}', '[]', '""', '0', 'true', '{"a":'.repeat(200), JSON.stringify({ name: '\u202e\ud83d\ude00' }),
      JSON.stringify({ email: '\ud800@example.com', password: '\ud800', role: 'viewer', name: '\ud800', personId: ID.per }),
      JSON.stringify(JSON.parse(`${'['.repeat(500)}${']'.repeat(500)}`)),
    ];
    const seen: Reply[] = [];
    for (const route of t.app.declaredRoutes.filter((r) => FOUNDATION.test(r.operation) && r.operation !== 'auth.signOut')) {
      for (const body of odd) {
        const reply = await admin.call(route.method as InjectOptions['method'], fillParams(route.url), route.method === 'GET' ? undefined : body, route.method === 'GET' ? {} : json);
        seen.push(reply);
        expect(reply.status, `${route.method} ${route.url} ${String(body).slice(0, 40)} → ${JSON.stringify(reply.body).slice(0, 200)}`).toBeLessThan(500);
        expect(reply.headers['x-request-id']).toMatch(/^req_[0-9a-z]{26}$/);
      }
    }
    expect(seen.length).toBeGreaterThan(100);
    expect(new Set(seen.map((r) => r.headers['x-request-id'])).size).toBe(seen.length);
  });
});
