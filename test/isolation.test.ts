import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { SCOPES } from '../src/abilities.js';
import { createOwner } from '../src/modules/setup/first-owner.js';
import { Client, expectError, signedInOwner, type Reply } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * Tenant isolation, thing by thing: whatever one workspace creates in the database (collection
 * names, records, record indexes and their uniqueness, index names, schema versions, files,
 * webhooks, keys, service accounts), a second workspace, and a second collection of the same
 * workspace, are unaffected: they may create the same names and values, their lists leave the
 * other's out, and the other's ids answer 404 NOT_FOUND.
 *
 * Workspace A (owner Ann) has the collections `people` and `other`; workspace B (owner Bob, a
 * different person with nothing in A) has its own `people`. Each also has an API key holding
 * every data scope, so both credentials are tried across the line.
 */

interface Tenant {
  session: Client;
  key: string;
  workspaceId: string;
  /** Collection ids by name. */
  collections: Record<string, string>;
}

describeEachEngine('tenant isolation', (engine) => {
  let t: TestApp;
  let dataDir: string;
  let a: Tenant;
  let b: Tenant;

  async function tenant(session: Client, names: string[]): Promise<Tenant> {
    const collections: Record<string, string> = {};
    for (const name of names) {
      const created = await session.post('/v1/collections', { name });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      collections[name] = created.body.id;
    }
    const key = await session.post('/v1/keys', { name: 'sync', scopes: [...SCOPES] });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    return { session, key: key.body.secret, workspaceId: session.workspaceId!, collections };
  }

  beforeEach(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-isolation-'));
    t = await startTestApp(engine, { dataDir, env: 'development', webhookAllowPrivate: true });
    a = await tenant(await signedInOwner(t), ['people', 'other']);
    const { workspace } = await createOwner(t.deps, { email: 'bob@example.com', password: 'bobs own password', workspaceName: 'b' });
    const bob = new Client(t);
    expect((await bob.signIn('bob@example.com', 'bobs own password')).status).toBe(200);
    bob.workspaceId = workspace.id;
    b = await tenant(bob, ['people']);
  });
  afterEach(async () => {
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** A data call with a tenant's API key. */
  const withKey = (who: Tenant, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, body?: unknown) =>
    new Client(t).call(method, url, body, { authorization: `Bearer ${who.key}` });

  const ids = (reply: Reply) => (reply.body.data as { id: string }[]).map((item) => item.id);

  it('collection names: each workspace has its own; the other\'s ids answer 404, by id and by name', async () => {
    // B's `people` took the same name; by name each workspace reaches its own.
    expect(b.collections.people).not.toBe(a.collections.people);
    expect((await a.session.get('/v1/collections/people')).body.id).toBe(a.collections.people);
    expect((await withKey(b, 'GET', '/v1/collections/people')).body.id).toBe(b.collections.people);
    expect(ids(await b.session.get('/v1/collections'))).toEqual([b.collections.people]);
    expect(ids(await withKey(a, 'GET', '/v1/collections')).sort()).toEqual([a.collections.people, a.collections.other].sort());

    for (const caller of [(url: string) => b.session.get(url), (url: string) => withKey(b, 'GET', url)]) {
      expectError(await caller(`/v1/collections/${a.collections.people}`), 404, 'NOT_FOUND');
      expectError(await caller(`/v1/collections/${a.collections.other}`), 404, 'NOT_FOUND');
      expectError(await caller('/v1/collections/other'), 404, 'NOT_FOUND');
    }
    expectError(await withKey(b, 'PATCH', `/v1/collections/${a.collections.people}`, { name: 'mine' }), 404, 'NOT_FOUND');
    expectError(await withKey(b, 'DELETE', `/v1/collections/${a.collections.people}`), 404, 'NOT_FOUND');
    expectError(await b.session.delete(`/v1/collections/${a.collections.people}?permanent=true`), 404, 'NOT_FOUND');

    // A's trash is A's: B's `people` stays, B's trash shows nothing, and the name stays taken in A only.
    expect((await a.session.delete('/v1/collections/people')).status).toBe(200);
    expect((await b.session.get('/v1/collections/people')).status).toBe(200);
    expect(ids(await b.session.get('/v1/collections?trashed=true'))).toEqual([]);
    expectError(await withKey(b, 'POST', `/v1/collections/${a.collections.people}/restore`), 404, 'NOT_FOUND');
    expect((await a.session.post('/v1/collections', { name: 'people' })).status).toBe(409);
    expect((await b.session.post('/v1/collections', { name: 'other' })).status).toBe(201);
  });

  it('records: each collection lists its own; ids of another collection or workspace answer 404 to every verb', async () => {
    const create = async (who: Tenant, col: string, data: unknown) => {
      const reply = await withKey(who, 'POST', `/v1/collections/${col}/records`, { data });
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      return reply.body.id as string;
    };
    const mine = await create(a, 'people', { name: 'Ann' });
    const sibling = await create(a, 'other', { name: 'Ann' });
    const theirs = await create(b, 'people', { name: 'Ann' });
    expect(ids(await withKey(a, 'GET', '/v1/collections/people/records'))).toEqual([mine]);
    expect(ids(await withKey(a, 'GET', '/v1/collections/other/records'))).toEqual([sibling]);
    expect(ids(await withKey(b, 'GET', '/v1/collections/people/records'))).toEqual([theirs]);

    // A record reached through the wrong collection (same workspace) or the other workspace.
    const wrongWays: [Tenant, string, string][] = [
      [a, 'other', mine],
      [b, 'people', mine],
      [b, a.collections.people, mine],
      [a, 'people', theirs],
    ];
    for (const [who, col, rec] of wrongWays) {
      const url = `/v1/collections/${col}/records/${rec}`;
      expectError(await withKey(who, 'GET', url), 404, 'NOT_FOUND');
      expectError(await withKey(who, 'PATCH', url, { data: { name: 'Eve' } }), 404, 'NOT_FOUND');
      expectError(await withKey(who, 'PUT', url, { data: { name: 'Eve' } }), 404, 'NOT_FOUND');
      expectError(await withKey(who, 'DELETE', url), 404, 'NOT_FOUND');
      expectError(await withKey(who, 'POST', `${url}/restore`), 404, 'NOT_FOUND');
    }
    expect((await withKey(a, 'GET', `/v1/collections/people/records/${mine}`)).body.data).toEqual({ name: 'Ann' });
    expect((await withKey(b, 'GET', `/v1/collections/people/records/${theirs}`)).body.data).toEqual({ name: 'Ann' });
  });

  it('record indexes: the same name anywhere; uniqueness, and the duplicates that block it, stay in one collection', async () => {
    const create = (who: Tenant, col: string, data: unknown) => withKey(who, 'POST', `/v1/collections/${col}/records`, { data });
    const index = (who: Tenant, col: string, unique: boolean) =>
      who.session.post(`/v1/collections/${col}/indexes`, { name: 'by_email', fields: ['data.email'], unique });
    // B's collection holds duplicates; that must not stop A from making its unique index.
    for (let i = 0; i < 2; i++) expect((await create(b, 'people', { email: 'dup@example.com' })).status).toBe(201);
    expect((await create(a, 'people', { email: 'dup@example.com' })).status).toBe(201);
    expect((await index(a, 'people', true)).status).toBe(201);
    // The same index name in A's other collection and in B (there over B's own duplicates: not unique).
    expect((await index(a, 'other', false)).status).toBe(201);
    expectError(await index(b, 'people', true), 409, 'CONFLICT');
    expect((await index(b, 'people', false)).status).toBe(201);
    expectError(await index(a, 'people', false), 409, 'CONFLICT');

    // A's unique index refuses A's own duplicate and nothing of anyone else's.
    expectError(await create(a, 'people', { email: 'dup@example.com' }), 409, 'CONFLICT');
    for (let i = 0; i < 2; i++) {
      expect((await create(a, 'other', { email: 'dup@example.com' })).status).toBe(201);
      expect((await create(b, 'people', { email: 'dup@example.com' })).status).toBe(201);
    }

    // Lists show each collection's own index; the other workspace's collection is not found.
    const listed = async (who: Tenant, col: string) => (await who.session.get(`/v1/collections/${col}/indexes`)).body;
    expect(await listed(a, 'people')).toMatchObject({ data: [{ name: 'by_email', unique: true }] });
    expect(await listed(a, 'other')).toMatchObject({ data: [{ name: 'by_email', unique: false }] });
    expect(await listed(b, 'people')).toMatchObject({ data: [{ name: 'by_email', unique: false }] });
    expectError(await b.session.get(`/v1/collections/${a.collections.people}/indexes`), 404, 'NOT_FOUND');
    expectError(await b.session.delete(`/v1/collections/${a.collections.people}/indexes/by_email`), 404, 'NOT_FOUND');

    // Dropping one collection's index leaves the others'.
    expect((await a.session.delete('/v1/collections/people/indexes/by_email')).status).toBe(204);
    expect((await listed(a, 'people')).data).toEqual([]);
    expect((await listed(a, 'other')).data).toHaveLength(1);
    expect((await listed(b, 'people')).data).toHaveLength(1);
    expect((await create(a, 'people', { email: 'dup@example.com' })).status).toBe(201);
  });

  it('a unique index under a race: one of A\'s concurrent duplicates wins, and every one of B\'s goes through', async () => {
    expect((await a.session.post('/v1/collections/people/indexes', { name: 'by_code', fields: ['data.code'], unique: true })).status).toBe(201);
    expect((await a.session.post('/v1/collections/other/indexes', { name: 'by_code', fields: ['data.code'], unique: true })).status).toBe(201);
    const race = (who: Tenant, col: string) => Array.from({ length: 8 }, () => withKey(who, 'POST', `/v1/collections/${col}/records`, { data: { code: 7 } }));
    const [inA, inOther, inB] = await Promise.all([Promise.all(race(a, 'people')), Promise.all(race(a, 'other')), Promise.all(race(b, 'people'))]);
    for (const replies of [inA, inOther]) {
      expect(replies.map((reply) => reply.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
      for (const reply of replies.filter((r) => r.status === 409)) expectError(reply, 409, 'CONFLICT');
    }
    expect(inB.map((reply) => reply.status)).toEqual(Array(8).fill(201));
    expect((await withKey(b, 'GET', '/v1/collections/people/records?limit=100')).body.data).toHaveLength(8);
  });

  it('schema versions: numbered per collection, enforced in their own collection only', async () => {
    const schema = { type: 'object', required: ['email'], properties: { email: { type: 'string' } } };
    for (const [who, col] of [[a, 'people'], [a, 'other'], [b, 'people']] as const) {
      const created = await withKey(who, 'POST', `/v1/collections/${col}/schemas`, { schema });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.version).toBe(1);
    }
    expect((await withKey(a, 'POST', '/v1/collections/people/schemas/1/activate')).status).toBe(200);
    // Only A's `people` enforces it.
    expectError(await withKey(a, 'POST', '/v1/collections/people/records', { data: { name: 'no email' } }), 422, 'SCHEMA_VALIDATION_FAILED');
    expect((await withKey(a, 'POST', '/v1/collections/other/records', { data: { name: 'no email' } })).status).toBe(201);
    expect((await withKey(b, 'POST', '/v1/collections/people/records', { data: { name: 'no email' } })).status).toBe(201);

    const versions = async (who: Tenant, col: string) => (await withKey(who, 'GET', `/v1/collections/${col}/schemas`)).body.data;
    expect(await versions(b, 'people')).toMatchObject([{ version: 1, state: 'draft', collectionId: b.collections.people }]);
    expect(await versions(a, 'people')).toMatchObject([{ version: 1, state: 'active', collectionId: a.collections.people }]);
    expectError(await withKey(b, 'GET', `/v1/collections/${a.collections.people}/schemas/1`), 404, 'NOT_FOUND');
    expectError(await withKey(b, 'POST', `/v1/collections/${a.collections.people}/schemas/1/deactivate`), 404, 'NOT_FOUND');
    expectError(await withKey(b, 'POST', `/v1/collections/${a.collections.people}/schemas`, { schema }), 404, 'NOT_FOUND');
    expect(await versions(a, 'people')).toMatchObject([{ version: 1, state: 'active' }]);
  });

  it('files: the same name and bytes in each place are separate files; the other\'s ids answer 404', async () => {
    const bytes = Buffer.from('the same bytes everywhere');
    const upload = async (who: Tenant, col: string) => {
      const reply = await new Client(t).call('POST', `/v1/collections/${col}/files?name=same.txt`, bytes.toString(), {
        authorization: `Bearer ${who.key}`,
        'content-type': 'text/plain',
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      return reply.body.id as string;
    };
    const mine = await upload(a, 'people');
    const sibling = await upload(a, 'other');
    const theirs = await upload(b, 'people');
    expect(new Set([mine, sibling, theirs]).size).toBe(3);
    expect(ids(await withKey(a, 'GET', '/v1/collections/people/files'))).toEqual([mine]);
    expect(ids(await withKey(a, 'GET', '/v1/collections/other/files'))).toEqual([sibling]);
    expect(ids(await withKey(b, 'GET', '/v1/collections/people/files'))).toEqual([theirs]);

    const record = (await withKey(b, 'POST', '/v1/collections/people/records', { data: {} })).body.id;
    const wrongWays: [Tenant, string, string][] = [[a, 'other', mine], [b, 'people', mine], [b, a.collections.people, mine]];
    for (const [who, col, fil] of wrongWays) {
      expectError(await withKey(who, 'GET', `/v1/collections/${col}/files/${fil}`), 404, 'NOT_FOUND');
      expectError(await withKey(who, 'GET', `/v1/collections/${col}/files/${fil}/content`), 404, 'NOT_FOUND');
      expectError(await withKey(who, 'DELETE', `/v1/collections/${col}/files/${fil}`), 404, 'NOT_FOUND');
    }
    // B cannot attach A's file to its own record.
    expectError(await withKey(b, 'POST', `/v1/collections/people/records/${record}/files`, { fileId: mine }), 404, 'NOT_FOUND');

    // Deleting A's file leaves the files with the same name and bytes elsewhere whole.
    expect((await withKey(a, 'DELETE', `/v1/collections/people/files/${mine}`)).status).toBe(204);
    for (const [who, col, fil] of [[a, 'other', sibling], [b, 'people', theirs]] as const) {
      const content = await withKey(who, 'GET', `/v1/collections/${col}/files/${fil}/content`);
      expect(content.status).toBe(200);
      expect(content.body).toBe(bytes.toString());
    }
  });

  it('webhooks: the same URL in each workspace; lists and ids stay in their workspace; collections of another workspace are refused', async () => {
    const url = 'http://127.0.0.1:9/hook';
    const mine = await a.session.post('/v1/webhooks', { url, events: ['*'], collections: ['people'] });
    const theirs = await b.session.post('/v1/webhooks', { url, events: ['*'], collections: ['people'] });
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(mine.body.collections).toEqual([a.collections.people]);
    expect(theirs.body.collections).toEqual([b.collections.people]);
    expect(ids(await a.session.get('/v1/webhooks'))).toEqual([mine.body.id]);
    expect(ids(await b.session.get('/v1/webhooks'))).toEqual([theirs.body.id]);

    const other = `/v1/webhooks/${mine.body.id}`;
    expectError(await b.session.get(other), 404, 'NOT_FOUND');
    expectError(await b.session.patch(other, { events: ['record.created'] }), 404, 'NOT_FOUND');
    expectError(await b.session.post(`${other}/disable`), 404, 'NOT_FOUND');
    expectError(await b.session.post(`${other}/rotate-secret`), 404, 'NOT_FOUND');
    expectError(await b.session.post(`${other}/ping`), 404, 'NOT_FOUND');
    expectError(await b.session.get(`${other}/deliveries`), 404, 'NOT_FOUND');
    expectError(await b.session.delete(other), 404, 'NOT_FOUND');
    expectError(await b.session.post('/v1/webhooks', { url, events: ['*'], collections: [a.collections.people] }), 400, 'INVALID_REQUEST');
    expect((await a.session.get(other)).body).toMatchObject({ id: mine.body.id, enabled: true });
  });

  it('keys and service accounts: the same names in each workspace; the other\'s ids answer 404; a key reaches its own workspace only', async () => {
    const sa = await a.session.post('/v1/service-accounts', { name: 'sync', role: 'editor' });
    const theirSa = await b.session.post('/v1/service-accounts', { name: 'sync', role: 'editor' });
    expect([sa.status, theirSa.status]).toEqual([201, 201]);
    expect(ids(await b.session.get('/v1/service-accounts'))).toEqual([theirSa.body.id]);
    expectError(await b.session.patch(`/v1/service-accounts/${sa.body.id}`, { name: 'mine' }), 404, 'NOT_FOUND');
    expectError(await b.session.delete(`/v1/service-accounts/${sa.body.id}`), 404, 'NOT_FOUND');
    expectError(await b.session.post('/v1/keys', { name: 'x', scopes: ['records:read'], serviceAccountId: sa.body.id }), 404, 'NOT_FOUND');

    // Both workspaces hold a key named `sync` (made in beforeEach); each lists only its own.
    const aKeys = (await a.session.get('/v1/keys')).body.data as { id: string; name: string }[];
    const bKeys = (await b.session.get('/v1/keys')).body.data as { id: string; name: string }[];
    expect(aKeys.map((key) => key.name)).toEqual(['sync']);
    expect(bKeys.map((key) => key.name)).toEqual(['sync']);
    const aKey = aKeys[0]!.id;
    expectError(await b.session.get(`/v1/keys/${aKey}`), 404, 'NOT_FOUND');
    expectError(await b.session.post(`/v1/keys/${aKey}/rotate`, { gracePeriodSeconds: 0 }), 404, 'NOT_FOUND');
    expectError(await b.session.post(`/v1/keys/${aKey}/revoke`), 404, 'NOT_FOUND');
    expectError(await b.session.post('/v1/keys', { name: 'x', scopes: ['records:read'], collections: [a.collections.people] }), 400, 'INVALID_REQUEST');
    // A's key still works, in A only.
    expect((await withKey(a, 'GET', '/v1/me')).body.workspaceId).toBe(a.workspaceId);
    expectError(await withKey(a, 'GET', `/v1/collections/${b.collections.people}/records`), 404, 'NOT_FOUND');
  });

  it('people, invites and the audit log: each workspace sees its own', async () => {
    expect((await a.session.post('/v1/invites', { email: 'same@example.com', role: 'editor' })).status).toBe(201);
    const theirInvite = await b.session.post('/v1/invites', { email: 'same@example.com', role: 'editor' });
    expect(theirInvite.status).toBe(201);
    expect(ids(await b.session.get('/v1/invites'))).toEqual([theirInvite.body.id]);
    const members = async (who: Tenant) => ((await who.session.get('/v1/members')).body.data as { email: string }[]).map((m) => m.email);
    expect(await members(a)).toEqual(['owner@example.com']);
    expect(await members(b)).toEqual(['bob@example.com']);
    const aPerson = (await a.session.get('/v1/members')).body.data[0].personId;
    expectError(await b.session.patch(`/v1/members/${aPerson}`, { role: 'viewer' }), 404, 'NOT_FOUND');
    expectError(await b.session.delete(`/v1/members/${aPerson}`), 404, 'NOT_FOUND');

    const targets = async (who: Tenant) => ((await who.session.get('/v1/audit-log?limit=1000')).body.data as { target: { id: string } }[]).map((entry) => entry.target.id);
    expect(await targets(b)).not.toContain(a.collections.people);
    expect(await targets(a)).not.toContain(b.collections.people);
    expect(await targets(a)).toContain(a.collections.people);
  });
});
