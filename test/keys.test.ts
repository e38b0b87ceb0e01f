import { createHash } from 'node:crypto';
import { afterEach, expect, it, vi } from 'vitest';
import { newId } from '../src/ids.js';
import { issueToken } from '../src/modules/keys/token.js';
import { addMember, allAuditEntries, Client, expectError, signedInOwner, type Reply } from './support/client.js';
import { startCountingApp } from './support/counting-app.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const ALL_SCOPES = [
  'collections:read', 'collections:create', 'collections:update', 'collections:delete',
  'records:read', 'records:create', 'records:update', 'records:delete',
  'schemas:read', 'schemas:write', 'files:read', 'files:write',
];
const START = '2026-11-22T10:00:00.000Z';
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Creates a key as `client` and insists on 201. */
async function newKey(client: Client, body: Record<string, unknown>): Promise<any> {
  const reply = await client.post('/v1/keys', body);
  if (reply.status !== 201) throw new Error(`creating a key: ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** The response text exactly as sent, for checks that must not depend on parsing. */
async function rawText(t: TestApp, client: Client, url: string): Promise<string> {
  const response = await t.app.inject({ method: 'GET', url, headers: { cookie: `plainbase_session=${client.cookie}`, 'x-baas-workspace': client.workspaceId! } });
  expect(response.statusCode).toBe(200);
  return response.body;
}

describeEachEngine('API keys', (engine) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  const start = async (overrides: Parameters<typeof startTestApp>[1] = {}) => {
    t = await startTestApp(engine, overrides);
    return t;
  };

  it('create answers 201 with the secret, once: get, list and the database never hold the secret or its hash in the clear', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const created = await owner.post('/v1/keys', { name: 'CI pipeline', scopes: ['records:read', 'collections:read'] });
    expect(created.status).toBe(201);
    const { secret, ...key } = created.body;
    expect(secret).toMatch(/^pb_live_[0-9a-z]{26}_[0-9A-Za-z]{49}$/);
    expect(key).toEqual({
      id: expect.stringMatching(/^key_[0-9a-z]{26}$/),
      name: 'CI pipeline',
      mode: 'live',
      preview: `pb_live_${secret.split('_')[2]}_…${secret.slice(-4)}`,
      scopes: ['records:read', 'collections:read'],
      collections: null,
      expiresAt: null,
      serviceAccountId: null,
      createdBy: owner.personId,
      createdAt: START,
      lastUsedAt: null,
      lastUsedIp: null,
      state: 'active',
    });
    expect(secret.split('_')[2]).toBe(key.id.slice('key_'.length));

    const rotated = await owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 60 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^pb_live_/);

    for (const text of [await rawText(t, owner, `/v1/keys/${key.id}`), await rawText(t, owner, '/v1/keys')]) {
      expect(text).toContain(key.id);
      for (const s of [secret, rotated.body.secret]) {
        expect(text).not.toContain(s);
        expect(text).not.toContain(s.split('_')[3]);
        expect(text).not.toContain(sha256(s));
      }
      expect(text).not.toMatch(/"secret"|"hash"|secret_hash/);
    }
    // The database holds hashes only.
    const dump = JSON.stringify([
      await t.deps.db.selectFrom('api_keys').selectAll().execute(),
      await t.deps.db.selectFrom('api_key_secrets').selectAll().execute(),
      await t.deps.db.selectFrom('audit_log').selectAll().execute(),
    ]);
    for (const s of [secret, rotated.body.secret]) {
      expect(dump).not.toContain(s.split('_')[3]);
      expect(dump).toContain(sha256(s));
    }
  });

  it('list shows preview, scopes, restriction, expiry, mode, creator or service account, and state active / expired / revoked', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const { body: leads } = await owner.post('/v1/collections', { name: 'leads' });
    const { body: robot } = await owner.post('/v1/service-accounts', { name: 'robot', role: 'editor' });
    const expiring = await newKey(owner, { name: 'expiring', scopes: ['records:read'], collections: ['leads'], expiresAt: '2026-11-22T11:00:00.000Z' });
    const test = await newKey(owner, { name: 'test mode', scopes: ['records:create'], mode: 'test' });
    const revoked = await newKey(owner, { name: 'revoked', scopes: ['files:read'] });
    const machine = await newKey(owner, { name: 'machine', scopes: ['records:update'], serviceAccountId: robot.id });
    expect((await owner.post(`/v1/keys/${revoked.id}/revoke`)).status).toBe(200);
    t.clock.advance(3600_000);

    const { body } = await owner.get('/v1/keys');
    const byName = Object.fromEntries(body.data.map((k: any) => [k.name, k]));
    expect(body.data.map((k: any) => k.name)).toEqual(['expiring', 'test mode', 'revoked', 'machine']);
    expect(body.nextCursor).toBeNull();
    expect(byName.expiring).toMatchObject({ state: 'expired', collections: [leads.id], expiresAt: '2026-11-22T11:00:00.000Z', mode: 'live', scopes: ['records:read'], preview: expiring.preview });
    expect(byName['test mode']).toMatchObject({ state: 'active', mode: 'test', preview: expect.stringMatching(/^pb_test_[0-9a-z]{26}_…[0-9A-Za-z]{4}$/), createdBy: owner.personId, serviceAccountId: null });
    expect(test.secret.startsWith('pb_test_')).toBe(true);
    expect(byName.revoked).toMatchObject({ state: 'revoked' });
    expect(byName.machine).toMatchObject({ state: 'active', serviceAccountId: robot.id, createdBy: owner.personId });
    expect(machine.serviceAccountId).toBe(robot.id);
    for (const k of body.data) expect(Object.keys(k).sort()).toEqual(['collections', 'createdAt', 'createdBy', 'expiresAt', 'id', 'lastUsedAt', 'lastUsedIp', 'mode', 'name', 'preview', 'scopes', 'serviceAccountId', 'state'].sort());

    // Paging follows the id order.
    const first = await owner.get('/v1/keys?limit=3');
    expect(first.body.data).toHaveLength(3);
    const rest = await owner.get(`/v1/keys?limit=3&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(rest.body.data.map((k: any) => k.name)).toEqual(['machine']);
  });

  it('records last use at minute precision: set on first use, not rewritten within a minute, rewritten after it', async () => {
    const counting = await startCountingApp(engine);
    t = counting;
    const owner = await signedInOwner(counting);
    const key = await newKey(owner, { name: 'k', scopes: ['records:read'] });
    const api = new Client(counting);
    const lastUse = async () => counting.deps.db.selectFrom('api_keys').select(['last_used_at', 'last_used_ip']).where('id', '=', key.id).executeTakeFirstOrThrow();
    const writesOfLastUse = () => counting.queries.filter((q) => q === 'UpdateQueryNode api_keys').length;

    api.remoteAddress = '203.0.113.7';
    expect((await api.get('/v1/me', bearer(key.secret))).status).toBe(200);
    // The bookkeeping write is not awaited by the request; wait for it to land.
    await vi.waitFor(async () => expect(await lastUse()).toEqual({ last_used_at: START, last_used_ip: '203.0.113.7' }));
    expect(writesOfLastUse()).toBe(1);
    expect((await owner.get(`/v1/keys/${key.id}`)).body).toMatchObject({ lastUsedAt: START, lastUsedIp: '203.0.113.7' });

    counting.clock.advance(30_000);
    api.remoteAddress = '198.51.100.9';
    expect((await api.get('/v1/me', bearer(key.secret))).status).toBe(200);
    counting.clock.advance(29_999);
    expect((await api.get('/v1/me', bearer(key.secret))).status).toBe(200);
    // No write was even issued, so none can land later.
    expect(writesOfLastUse()).toBe(1);
    expect(await lastUse()).toEqual({ last_used_at: START, last_used_ip: '203.0.113.7' });

    counting.clock.advance(1_001); // 61 s after the first use
    expect((await api.get('/v1/me', bearer(key.secret))).status).toBe(200);
    await vi.waitFor(async () => expect(await lastUse()).toEqual({ last_used_at: '2026-11-22T10:01:01.000Z', last_used_ip: '198.51.100.9' }));
    expect(writesOfLastUse()).toBe(2);
  });

  it('a garbage token (checksum fails) is refused without any database query; a valid one does query', async () => {
    const counting = await startCountingApp(engine);
    t = counting;
    const owner = await signedInOwner(counting);
    const key = await newKey(owner, { name: 'k', scopes: ['records:read'] });
    const api = new Client(counting);
    const wrongChecksum = key.secret.slice(0, -1) + (key.secret.endsWith('A') ? 'B' : 'A');
    const refusals: [string, Record<string, string>][] = [
      ['checksum', bearer(wrongChecksum)],
      ['garbage', bearer('hello-world')],
      ['malformed', bearer('pb_live_abc_def')],
      ['no Bearer', { authorization: key.secret }],
      ['empty Bearer', { authorization: 'Bearer ' }],
    ];
    for (const [what, headers] of refusals) {
      const before = counting.queries.length;
      const reply = await api.get('/v1/collections', headers);
      expectError(reply, 401, 'INVALID_API_KEY');
      expect(counting.queries.slice(before), what).toEqual([]);
    }
    // The counter does see the queries of a valid key (the proof above is not vacuous).
    const before = counting.queries.length;
    expect((await api.get('/v1/me', bearer(key.secret))).status).toBe(200);
    expect(counting.queries.length).toBeGreaterThan(before);
    // A well-formed token of an unknown key passes the checksum and costs one lookup by id.
    const unknown = issueToken('live', newId('key'));
    const beforeUnknown = counting.queries.length;
    expectError(await api.get('/v1/me', bearer(unknown)), 401, 'INVALID_API_KEY');
    expect(counting.queries.slice(beforeUnknown)).toHaveLength(1);
  });

  it('a viewer creates keys only within their own abilities, and sees and manages only their own', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
    const viewer = await addMember(t, owner, 'vera@example.com', 'viewer');
    const ownerKey = await newKey(owner, { name: 'owner key', scopes: ['records:read'] });

    const readKey = await viewer.post('/v1/keys', { name: 'reader', scopes: ['records:read'] });
    expect(readKey.status).toBe(201);
    expect(readKey.body.createdBy).toBe(viewer.personId);
    const tooMuch = expectError(await viewer.post('/v1/keys', { name: 'writer', scopes: ['records:read', 'records:create'] }), 403, 'FORBIDDEN');
    expect(tooMuch.message).toContain('records:create');
    expectError(await viewer.post('/v1/keys', { name: 'robot', scopes: ['records:read'], serviceAccountId: `sa_${newId('key').slice(4)}` }), 403, 'FORBIDDEN');

    expect((await viewer.get('/v1/keys')).body.data.map((k: any) => k.id)).toEqual([readKey.body.id]);
    expect((await viewer.get(`/v1/keys/${readKey.body.id}`)).status).toBe(200);
    expectError(await viewer.get(`/v1/keys/${ownerKey.id}`), 404, 'NOT_FOUND');
    expectError(await viewer.post(`/v1/keys/${ownerKey.id}/rotate`, { gracePeriodSeconds: 0 }), 404, 'NOT_FOUND');
    expectError(await viewer.post(`/v1/keys/${ownerKey.id}/revoke`), 404, 'NOT_FOUND');
    expect((await new Client(t).get('/v1/me', bearer(ownerKey.secret))).status).toBe(200);
    // Their own key they rotate and revoke.
    expect((await viewer.post(`/v1/keys/${readKey.body.id}/rotate`, { gracePeriodSeconds: 0 })).status).toBe(200);
    expect((await viewer.post(`/v1/keys/${readKey.body.id}/revoke`)).body.state).toBe('revoked');
  });

  it('an admin sees and revokes every key; an editor cannot see the admin\'s key', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const admin = await addMember(t, owner, 'ada@example.com', 'admin');
    const editor = await addMember(t, owner, 'ed@example.com', 'editor');
    const adminKey = await newKey(admin, { name: 'admin key', scopes: ['records:read'] });
    const editorKey = await newKey(editor, { name: 'editor key', scopes: ['records:create'] });
    const ownerKey = await newKey(owner, { name: 'owner key', scopes: ['schemas:write'] });

    expect((await admin.get('/v1/keys')).body.data.map((k: any) => k.name)).toEqual(['admin key', 'editor key', 'owner key']);
    expect((await editor.get('/v1/keys')).body.data.map((k: any) => k.name)).toEqual(['editor key']);
    expectError(await editor.get(`/v1/keys/${adminKey.id}`), 404, 'NOT_FOUND');
    expectError(await editor.post(`/v1/keys/${adminKey.id}/revoke`), 404, 'NOT_FOUND');

    expect((await admin.get(`/v1/keys/${ownerKey.id}`)).body.createdBy).toBe(owner.personId);
    expect((await admin.post(`/v1/keys/${editorKey.id}/revoke`)).body.state).toBe('revoked');
    expectError(await new Client(t).get('/v1/me', bearer(editorKey.secret)), 401, 'INVALID_API_KEY');
    // The owner outranks the admin: rotating would hand the admin a key acting as the owner. Revoking it is fine.
    expectError(await admin.post(`/v1/keys/${ownerKey.id}/rotate`, { gracePeriodSeconds: 0 }), 403, 'FORBIDDEN');
    expect((await new Client(t).get('/v1/me', bearer(ownerKey.secret))).status).toBe(200);
    expect((await admin.post(`/v1/keys/${ownerKey.id}/revoke`)).body.state).toBe('revoked');
    expectError(await new Client(t).get('/v1/me', bearer(ownerKey.secret)), 401, 'INVALID_API_KEY');
  });

  it('lets a person rotate only keys they could have created: never one acting with a higher role', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const admin = await addMember(t, owner, 'ada@example.com', 'admin');
    const otherAdmin = await addMember(t, owner, 'alan@example.com', 'admin');
    const editor = await addMember(t, owner, 'ed@example.com', 'editor');
    const ownerKey = await newKey(owner, { name: 'owner key', scopes: ['records:read', 'records:create'] });
    const otherAdminKey = await newKey(otherAdmin, { name: 'other admin key', scopes: ['records:read'] });
    const editorKey = await newKey(editor, { name: 'editor key', scopes: ['records:read'] });
    const robot = (await owner.post('/v1/service-accounts', { name: 'robot', role: 'admin' })).body;
    const robotKey = await newKey(owner, { name: 'robot key', scopes: ['records:read'], serviceAccountId: robot.id });
    const api = new Client(t);

    const refused = expectError(await admin.post(`/v1/keys/${ownerKey.id}/rotate`, { gracePeriodSeconds: 0 }), 403, 'FORBIDDEN');
    expect(refused.message).toMatch(/owner/);
    expectError(await admin.post(`/v1/keys/${ownerKey.id}/rotate`, { gracePeriodSeconds: 3600 }), 403, 'FORBIDDEN');
    // Nothing changed: the owner's secret works and is still the only one, no audit entry.
    expect((await api.get('/v1/me', bearer(ownerKey.secret))).body.key.id).toBe(ownerKey.id);
    expect((await owner.get(`/v1/keys/${ownerKey.id}`)).body.preview).toBe(ownerKey.preview);
    expect((await allAuditEntries(owner, 'action=key.rotated')).filter((entry) => entry.target.id === ownerKey.id)).toEqual([]);

    // Equal or lower roles, and service accounts the admin could have issued, rotate as before.
    for (const key of [otherAdminKey, editorKey, robotKey]) {
      const rotated = await admin.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 0 });
      expect(rotated.status, key.name).toBe(200);
      expect((await api.get('/v1/me', bearer(rotated.body.secret))).status).toBe(200);
    }
    const rotations = await allAuditEntries(owner, 'action=key.rotated');
    expect(rotations.map((entry) => [entry.actor.id, entry.target.id]).sort()).toEqual(
      [otherAdminKey.id, editorKey.id, robotKey.id].map((id) => [admin.personId, id]).sort(),
    );
    // The owner outranks everyone; a demoted creator's key falls to the new role.
    expect((await owner.post(`/v1/keys/${otherAdminKey.id}/rotate`, { gracePeriodSeconds: 0 })).status).toBe(200);
    expect((await owner.patch(`/v1/members/${otherAdmin.personId}`, { role: 'viewer' })).status).toBe(200);
    expect((await admin.post(`/v1/keys/${otherAdminKey.id}/rotate`, { gracePeriodSeconds: 0 })).status).toBe(200);
    // Revoking is never an escalation: allowed on the owner's key, audited as ever.
    expect((await admin.post(`/v1/keys/${ownerKey.id}/revoke`)).body.state).toBe('revoked');
    expect((await allAuditEntries(owner, 'action=key.revoked')).map((entry) => [entry.actor.id, entry.target.id])).toEqual([[admin.personId, ownerKey.id]]);
    expectError(await api.get('/v1/me', bearer(ownerKey.secret)), 401, 'INVALID_API_KEY');
  });

  it('pb_test_ keys behave exactly as live ones, on the same data', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
    const live = await newKey(owner, { name: 'live', scopes: ['records:read', 'records:create'] });
    const test = await newKey(owner, { name: 'test', scopes: ['records:read', 'records:create'], mode: 'test' });
    expect(test.secret).toMatch(/^pb_test_[0-9a-z]{26}_[0-9A-Za-z]{49}$/);
    expect(test.mode).toBe('test');
    const api = new Client(t);

    const fromTest = await api.post('/v1/collections/leads/records', { data: { by: 'test' } }, bearer(test.secret));
    expect(fromTest.status).toBe(201);
    const fromLive = await api.post('/v1/collections/leads/records', { data: { by: 'live' } }, bearer(live.secret));
    // Each sees what the other wrote: one set of data.
    expect((await api.get(`/v1/collections/leads/records/${fromTest.body.id}`, bearer(live.secret))).body.data).toEqual({ by: 'test' });
    expect((await api.get(`/v1/collections/leads/records/${fromLive.body.id}`, bearer(test.secret))).body.data).toEqual({ by: 'live' });
    expect((await owner.get(`/v1/collections/leads/records/${fromTest.body.id}`)).status).toBe(200);

    const me = await api.get('/v1/me', bearer(test.secret));
    expect(me.body).toMatchObject({ workspaceId: owner.workspaceId, key: { id: test.id, name: 'test', mode: 'test' }, effectiveScopes: ['records:read', 'records:create'] });
    expectError(await api.post('/v1/collections/leads/records/x/restore', {}, bearer(test.secret)), 403, 'MISSING_SCOPE');

    const rotated = await owner.post(`/v1/keys/${test.id}/rotate`, { gracePeriodSeconds: 0 });
    expect(rotated.body.secret).toMatch(/^pb_test_/);
    expectError(await api.get('/v1/me', bearer(test.secret)), 401, 'INVALID_API_KEY');
    expect((await api.get('/v1/me', bearer(rotated.body.secret))).status).toBe(200);
    await owner.post(`/v1/keys/${test.id}/revoke`);
    expectError(await api.get('/v1/me', bearer(rotated.body.secret)), 401, 'INVALID_API_KEY');
  });

  it('rotation with grace 0 refuses the old secret at once; same key, name and scopes, new secret', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const key = await newKey(owner, { name: 'k', scopes: ['records:read'] });
    const api = new Client(t);
    const rotated = await owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 0 });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ id: key.id, name: 'k', scopes: ['records:read'], state: 'active', createdAt: key.createdAt });
    expect(rotated.body.secret).not.toBe(key.secret);
    expect(rotated.body.preview).toBe(`pb_live_${key.id.slice(4)}_…${rotated.body.secret.slice(-4)}`);
    expect((await owner.get(`/v1/keys/${key.id}`)).body.preview).toBe(rotated.body.preview);
    expectError(await api.get('/v1/me', bearer(key.secret)), 401, 'INVALID_API_KEY');
    expect((await api.get('/v1/me', bearer(rotated.body.secret))).body.key.id).toBe(key.id);
  });

  it('rotation with grace 3600: both secrets work until the grace ends, then only the new one', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const key = await newKey(owner, { name: 'k', scopes: ['records:read'] });
    const api = new Client(t);
    const rotated = await owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 3600 });
    expect((await api.get('/v1/me', bearer(key.secret))).status).toBe(200);
    expect((await api.get('/v1/me', bearer(rotated.body.secret))).status).toBe(200);
    t.clock.advance(3599_999);
    expect((await api.get('/v1/me', bearer(key.secret))).status).toBe(200);
    t.clock.advance(1);
    expectError(await api.get('/v1/me', bearer(key.secret)), 401, 'INVALID_API_KEY');
    expect((await api.get('/v1/me', bearer(rotated.body.secret))).status).toBe(200);
  });

  it("the grace is capped by the key's expiry", async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const key = await newKey(owner, { name: 'k', scopes: ['records:read'], expiresAt: '2026-11-22T10:30:00.000Z' });
    const api = new Client(t);
    const rotated = await owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 3600 });
    expect(rotated.body.expiresAt).toBe('2026-11-22T10:30:00.000Z');
    const [entry] = await allAuditEntries(owner, 'action=key.rotated');
    expect(entry.details).toEqual({ gracePeriodSeconds: 3600, previousSecretValidUntil: '2026-11-22T10:30:00.000Z' });
    const row = await t.deps.db.selectFrom('api_key_secrets').select('expires_at').where('key_id', '=', key.id).where('expires_at', 'is not', null).executeTakeFirstOrThrow();
    expect(row.expires_at).toBe('2026-11-22T10:30:00.000Z');
    t.clock.advance(1800_000 - 1);
    expect((await api.get('/v1/me', bearer(key.secret))).status).toBe(200);
    t.clock.advance(1);
    // The old secret's grace has ended (it is not a valid secret any more); the key itself has expired.
    expectError(await api.get('/v1/me', bearer(key.secret)), 401, 'INVALID_API_KEY');
    expectError(await api.get('/v1/me', bearer(rotated.body.secret)), 401, 'API_KEY_EXPIRED');
  });

  it('rotating again ends the older grace at once; grace 0 ends every grace', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const key = await newKey(owner, { name: 'k', scopes: ['records:read'] });
    const api = new Client(t);
    const second = (await owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 3600 })).body.secret;
    const third = (await owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 3600 })).body.secret;
    expectError(await api.get('/v1/me', bearer(key.secret)), 401, 'INVALID_API_KEY');
    expect((await api.get('/v1/me', bearer(second))).status).toBe(200);
    expect((await api.get('/v1/me', bearer(third))).status).toBe(200);
    const fourth = (await owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 0 })).body.secret;
    for (const old of [key.secret, second, third]) expectError(await api.get('/v1/me', bearer(old)), 401, 'INVALID_API_KEY');
    expect((await api.get('/v1/me', bearer(fourth))).status).toBe(200);
  });

  it('concurrent rotations of one key leave exactly one current secret and one in grace', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const key = await newKey(owner, { name: 'k', scopes: ['records:read'] });
    const api = new Client(t);
    const rotations = await Promise.all(Array.from({ length: 6 }, () => owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 3600 })));
    expect(rotations.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const working: string[] = [];
    for (const secret of [key.secret, ...rotations.map((r) => r.body.secret as string)]) {
      if ((await api.get('/v1/me', bearer(secret))).status === 200) working.push(secret);
    }
    expect(working).toHaveLength(2);
    const rows = await t.deps.db.selectFrom('api_key_secrets').select('expires_at').where('key_id', '=', key.id).execute();
    expect(rows.map((row) => row.expires_at).sort()).toEqual(['2026-11-22T11:00:00.000Z', null].sort());
  });

  it('refuses a grace over 7 days, and the rotation of an expired or revoked key (409)', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const key = await newKey(owner, { name: 'k', scopes: ['records:read'], expiresAt: '2026-11-23T10:00:00.000Z' });
    for (const grace of [604_801, -1, 1.5, '60']) {
      const error = expectError(await owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: grace }), 400, 'INVALID_REQUEST');
      expect(error.details?.field ?? error.message).toContain('gracePeriodSeconds');
    }
    expectError(await owner.post(`/v1/keys/${key.id}/rotate`, {}), 400, 'INVALID_REQUEST');
    expect((await owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 604_800 })).status).toBe(200);

    t.clock.advance(24 * 3600_000);
    expectError(await owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 0 }), 409, 'CONFLICT');
    const other = await newKey(owner, { name: 'other', scopes: ['records:read'] });
    await owner.post(`/v1/keys/${other.id}/revoke`);
    expectError(await owner.post(`/v1/keys/${other.id}/rotate`, { gracePeriodSeconds: 0 }), 409, 'CONFLICT');
    expectError(await owner.post(`/v1/keys/key_${'0'.repeat(26)}/rotate`, { gracePeriodSeconds: 0 }), 404, 'NOT_FOUND');
  });

  it('revoke refuses the key at once, every secret of it, for good; an expired key answers API_KEY_EXPIRED', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const key = await newKey(owner, { name: 'k', scopes: ['records:read'] });
    const api = new Client(t);
    const graced = (await owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 3600 })).body.secret;
    expect((await api.get('/v1/me', bearer(key.secret))).status).toBe(200);
    const revoked = await owner.post(`/v1/keys/${key.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: key.id, state: 'revoked' });
    expect(revoked.body.secret).toBeUndefined();
    for (const secret of [key.secret, graced]) {
      const error = expectError(await api.get('/v1/me', bearer(secret)), 401, 'INVALID_API_KEY');
      expect(error.message).not.toContain(secret);
    }
    // Revoking again changes nothing; there is no way back.
    expect((await owner.post(`/v1/keys/${key.id}/revoke`)).body.state).toBe('revoked');
    expect((await owner.get(`/v1/keys/${key.id}`)).body.state).toBe('revoked');

    const expiring = await newKey(owner, { name: 'e', scopes: ['records:read'], expiresAt: '2026-11-22T10:00:10.000Z' });
    t.clock.advance(9_999);
    expect((await api.get('/v1/me', bearer(expiring.secret))).status).toBe(200);
    t.clock.advance(1);
    const expired = expectError(await api.get('/v1/me', bearer(expiring.secret)), 401, 'API_KEY_EXPIRED');
    expect(expired.message).toContain('2026-11-22T10:00:10.000Z');
  });

  it('refuses expiry dates in the past, whatever their time zone notation', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    // 11:00+02:00 is 09:00Z, an hour before the clock's 10:00Z, though its text sorts after it.
    for (const expiresAt of ['2026-11-22T09:59:59.999Z', '2026-11-22T11:00:00+02:00', '2026-11-22T10:00:00.000Z']) {
      expectError(await owner.post('/v1/keys', { name: 'k', scopes: ['records:read'], expiresAt }), 400, 'INVALID_REQUEST');
    }
    const offset = await newKey(owner, { name: 'k', scopes: ['records:read'], expiresAt: '2026-11-22T13:00:00+02:00' });
    expect(offset.expiresAt).toBe('2026-11-22T11:00:00.000Z');
  });

  it('refuses garbage, malformed, wrong-checksum and unknown keys, keys without Bearer, and keys in the URL', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const key = await newKey(owner, { name: 'k', scopes: ['collections:read'] });
    const api = new Client(t);
    const lastChar = key.secret.at(-1);
    const invalid: Record<string, string>[] = [
      bearer('garbage'),
      bearer('pb_live_'),
      bearer(key.secret.slice(0, -1)),
      bearer(key.secret.slice(0, -1) + (lastChar === '0' ? '1' : '0')),
      bearer(key.secret.replace('pb_live_', 'pb_test_')),
      bearer(issueToken('live', newId('key'))),
      bearer(`${key.secret} ${key.secret}`),
      { authorization: key.secret },
      { authorization: `Basic ${Buffer.from(`x:${key.secret}`).toString('base64')}` },
      { authorization: `Token ${key.secret}` },
      { authorization: 'Bearer' },
      { authorization: '' },
    ];
    for (const headers of invalid) {
      const error = expectError(await api.get('/v1/collections', headers), 401, 'INVALID_API_KEY');
      expect(error.message).not.toContain(key.secret);
    }
    // No Authorization header at all is no credential, whatever the URL or other headers hold.
    for (const url of [`/v1/collections?api_key=${key.secret}`, `/v1/collections?access_token=${key.secret}`]) {
      expectError(await api.get(url), 401, 'UNAUTHENTICATED');
    }
    expectError(await api.get('/v1/collections', { 'x-api-key': key.secret }), 401, 'UNAUTHENTICATED');
    expectError(await api.get('/v1/collections'), 401, 'UNAUTHENTICATED');
    // The scheme name is case-insensitive (RFC 9110); the key works as sent.
    expect((await api.get('/v1/collections', { authorization: `bearer ${key.secret}` })).status).toBe(200);
    expect((await api.get('/v1/collections', bearer(key.secret))).status).toBe(200);
  });

  it("shrinks at once when the creator is demoted (MISSING_SCOPE with a reason, GET /v1/me explains) and stops when they are removed", async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
    const editor = await addMember(t, owner, 'ed@example.com', 'editor');
    const key = await newKey(editor, { name: 'sync', scopes: ['records:read', 'records:create', 'collections:update'] });
    const api = new Client(t);
    expect((await api.post('/v1/collections/leads/records', { data: { n: 1 } }, bearer(key.secret))).status).toBe(201);

    expect((await owner.patch(`/v1/members/${editor.personId}`, { role: 'viewer' })).status).toBe(200);
    const refused = expectError(await api.post('/v1/collections/leads/records', { data: { n: 2 } }, bearer(key.secret)), 403, 'MISSING_SCOPE');
    expect(refused.details).toEqual({ requiredScope: 'records:create', reason: expect.stringContaining('viewer') });
    expectError(await api.patch('/v1/collections/leads', { public: true }, bearer(key.secret)), 403, 'MISSING_SCOPE');
    expect((await api.get('/v1/collections/leads', bearer(key.secret))).status).toBe(200);

    const me = await api.get('/v1/me', bearer(key.secret));
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      workspaceId: owner.workspaceId,
      key: { id: key.id, name: 'sync', mode: 'live' },
      role: 'viewer',
      grantedScopes: ['records:read', 'records:create', 'collections:update'],
      effectiveScopes: ['records:read'],
      suppressed: [
        { scope: 'records:create', reason: expect.stringContaining('viewer') },
        { scope: 'collections:update', reason: expect.stringContaining('viewer') },
      ],
      collections: null,
      expiresAt: null,
    });
    // The key's list entry still shows what was granted.
    expect((await editor.get(`/v1/keys/${key.id}`)).body.scopes).toEqual(['records:read', 'records:create', 'collections:update']);

    // Promoted back, the key regains its scopes: nothing was lost, only suppressed.
    await owner.patch(`/v1/members/${editor.personId}`, { role: 'editor' });
    expect((await api.get('/v1/me', bearer(key.secret))).body.suppressed).toEqual([]);
    expect((await api.post('/v1/collections/leads/records', { data: { n: 3 } }, bearer(key.secret))).status).toBe(201);

    expect((await owner.delete(`/v1/members/${editor.personId}`)).status).toBe(204);
    expectError(await api.get('/v1/me', bearer(key.secret)), 401, 'INVALID_API_KEY');
    expectError(await api.get('/v1/collections/leads', bearer(key.secret)), 401, 'INVALID_API_KEY');
  });

  it('docs/design.md §4, rule 1: a record, schema or file scope reads the collection, but does not change it', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const { body: leads } = await owner.post('/v1/collections', { name: 'leads' });
    const api = new Client(t);
    for (const scope of ['records:read', 'records:create', 'schemas:read', 'files:read', 'files:write']) {
      const key = await newKey(owner, { name: scope, scopes: [scope] });
      expect((await api.get('/v1/collections/leads', bearer(key.secret))).body.id, scope).toBe(leads.id);
      expect((await api.get(`/v1/collections/${leads.id}`, bearer(key.secret))).status, scope).toBe(200);
      const refused = expectError(await api.patch('/v1/collections/leads', { public: true }, bearer(key.secret)), 403, 'MISSING_SCOPE');
      expect(refused.details?.requiredScope).toBe('collections:update');
      expectError(await api.delete('/v1/collections/leads', bearer(key.secret)), 403, 'MISSING_SCOPE');
    }
    // A collection scope alone does not imply reading one.
    const creator = await newKey(owner, { name: 'creator', scopes: ['collections:create'] });
    const refused = expectError(await api.get('/v1/collections/leads', bearer(creator.secret)), 403, 'MISSING_SCOPE');
    expect(refused.details?.requiredScope).toBe('collections:read');
    expect((await api.post('/v1/collections', { name: 'made_by_key' }, bearer(creator.secret))).status).toBe(201);
    // Reading records never lets a key write them.
    const reader = await newKey(owner, { name: 'reader', scopes: ['records:read'] });
    expectError(await api.post('/v1/collections/leads/records', { data: {} }, bearer(reader.secret)), 403, 'MISSING_SCOPE');
  });

  it('a restricted key lists only its collections, is refused elsewhere, creates none, and does not follow a name to a re-created collection', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const { body: leads } = await owner.post('/v1/collections', { name: 'leads' });
    const { body: other } = await owner.post('/v1/collections', { name: 'other' });
    const { body: otherRecord } = await owner.post('/v1/collections/other/records', { data: { secret: true } });
    const key = await newKey(owner, { name: 'restricted', scopes: ALL_SCOPES, collections: ['leads'] });
    expect(key.collections).toEqual([leads.id]);
    const api = new Client(t);
    const as = bearer(key.secret);

    expect((await api.get('/v1/collections', as)).body.data.map((c: any) => c.id)).toEqual([leads.id]);
    expect((await api.get('/v1/me', as)).body.collections).toEqual([leads.id]);
    expect((await api.post('/v1/collections/leads/records', { data: {} }, as)).status).toBe(201);
    for (const [method, url, body] of [
      ['GET', '/v1/collections/other'],
      ['GET', `/v1/collections/${other.id}`],
      ['GET', `/v1/collections/other/records/${otherRecord.id}`],
      ['POST', '/v1/collections/other/records', { data: {} }],
      ['PATCH', `/v1/collections/${other.id}`, { public: true }],
      ['DELETE', '/v1/collections/other'],
      ['GET', '/v1/collections/other/schemas'],
    ] as const) {
      const error = expectError(await api.call(method, url, body, as), 403, 'COLLECTION_NOT_ALLOWED');
      expect(error.details?.collectionId).toBe(other.id);
    }
    expectError(await api.post('/v1/collections', { name: 'fresh' }, as), 403, 'COLLECTION_NOT_ALLOWED');
    expectError(await api.get('/v1/collections/nowhere', as), 404, 'NOT_FOUND');

    // Trashed collections: the trash list leaves the others out too.
    await owner.delete('/v1/collections/other');
    expect((await api.get('/v1/collections?trashed=true', as)).body.data).toEqual([]);

    // Deleted for good and re-created under the same name: a different collection, not allowed.
    expect((await owner.delete('/v1/collections/leads')).status).toBeLessThan(300);
    expect((await owner.delete('/v1/collections/leads?permanent=true')).status).toBeLessThan(300);
    const { body: again } = await owner.post('/v1/collections', { name: 'leads' });
    expect(again.id).not.toBe(leads.id);
    expectError(await api.get('/v1/collections/leads', as), 403, 'COLLECTION_NOT_ALLOWED');
    expectError(await api.post('/v1/collections/leads/records', { data: {} }, as), 403, 'COLLECTION_NOT_ALLOWED');
    expect((await api.get('/v1/collections', as)).body.data).toEqual([]);

    // A restriction must name collections that exist.
    expectError(await owner.post('/v1/keys', { name: 'x', scopes: ['records:read'], collections: ['nowhere'] }), 400, 'INVALID_REQUEST');
  });

  it('a key can never use person-only routes, whatever its scopes (PERSON_REQUIRED), and changes nothing trying', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
    const { body: record } = await owner.post('/v1/collections/leads/records', { data: {} });
    const viewer = await addMember(t, owner, 'vera@example.com', 'viewer');
    const key = await newKey(owner, { name: 'everything', scopes: ALL_SCOPES });
    const api = new Client(t);
    const samples: [string, string, unknown?][] = [
      ['GET', '/v1/members'],
      ['PATCH', `/v1/members/${viewer.personId}`, { role: 'admin' }],
      ['DELETE', `/v1/members/${viewer.personId}`],
      ['POST', '/v1/invites', { email: 'x@example.com', role: 'admin' }],
      ['GET', '/v1/keys'],
      ['POST', '/v1/keys', { name: 'child', scopes: ['records:read'] }],
      ['POST', `/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 0 }],
      ['POST', `/v1/keys/${key.id}/revoke`],
      ['GET', '/v1/service-accounts'],
      ['POST', '/v1/service-accounts', { name: 'sa', role: 'admin' }],
      ['GET', '/v1/audit-log'],
      ['POST', '/v1/workspace/transfer-ownership', { personId: viewer.personId }],
      ['GET', '/v1/workspaces'],
      ['DELETE', `/v1/collections/leads/records/${record.id}?permanent=true`],
      ['GET', '/v1/webhooks'],
      ['POST', '/v1/webhooks', { url: 'https://example.com/hook', events: ['*'] }],
      ['POST', '/v1/collections/leads/indexes', { name: 'by_email', fields: ['data.email'] }],
    ];
    for (const [method, url, body] of samples) {
      const reply: Reply = await api.call(method as 'GET', url, body, bearer(key.secret));
      expect(reply.body?.error?.code, `${method} ${url}`).toBe('PERSON_REQUIRED');
      expectError(reply, 403, 'PERSON_REQUIRED');
    }
    expect((await api.get('/v1/me', bearer(key.secret))).status).toBe(200);
    expect((await owner.get(`/v1/collections/leads/records/${record.id}`)).status).toBe(200);
    expect((await owner.get('/v1/members')).body.data.find((m: any) => m.personId === viewer.personId).role).toBe('viewer');
    expect((await owner.get('/v1/keys')).body.data).toHaveLength(1);
  });

  it('audits key.created / rotated / revoked, and the writes of a key as the key, via its creator, kept after revocation', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
    const editor = await addMember(t, owner, 'ed@example.com', 'editor');
    const key = await newKey(editor, { name: 'importer', scopes: ['records:create', 'collections:create'] });
    const api = new Client(t);
    const { body: record } = await api.post('/v1/collections/leads/records', { data: { n: 1 } }, bearer(key.secret));
    const { body: collection } = await api.post('/v1/collections', { name: 'made_by_key' }, bearer(key.secret));
    const rotated = await editor.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 0 });
    await editor.post(`/v1/keys/${key.id}/revoke`);

    const entries = await allAuditEntries(owner, 'action=key.*');
    expect(entries.map((e) => e.action)).toEqual(['key.revoked', 'key.rotated', 'key.created']);
    for (const entry of entries) {
      expect(entry.actor).toEqual({ type: 'person', id: editor.personId, name: 'ed' });
      expect(entry.target).toEqual({ type: 'key', id: key.id });
    }
    expect(entries[2].details).toMatchObject({ name: 'importer', scopes: ['records:create', 'collections:create'], mode: 'live' });
    expect(JSON.stringify(entries)).not.toContain(key.secret.split('_')[3]);
    expect(JSON.stringify(entries)).not.toContain(rotated.body.secret.split('_')[3]);

    // What the key did stays readable by its id, after the revocation.
    const byKey = await allAuditEntries(owner, `actor=${key.id}`);
    expect(byKey.map((e) => e.action)).toEqual(['collection.created', 'record.created']);
    for (const entry of byKey) {
      expect(entry.actor).toEqual({ type: 'key', id: key.id, name: 'importer' });
      expect(entry.details.via).toEqual({ type: 'person', id: editor.personId });
    }
    expect(byKey[1].target).toEqual({ type: 'record', id: record.id });
    expect(byKey[0].target).toEqual({ type: 'collection', id: collection.id });
  });

  it('limits each key on its own: the 4th call within a second answers 429 with retry-after and RateLimit headers', async () => {
    const t = await start({ rateLimitPerKey: 3 });
    const owner = await signedInOwner(t);
    const a = await newKey(owner, { name: 'a', scopes: ['collections:read'] });
    const b = await newKey(owner, { name: 'b', scopes: ['collections:read'] });
    const api = new Client(t);
    const statuses: number[] = [];
    let last: Reply | undefined;
    for (let i = 0; i < 4; i++) {
      last = await api.get('/v1/collections', bearer(a.secret));
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expectError(last!, 429, 'RATE_LIMITED');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(last!.headers['ratelimit-limit']).toBe('3');
    expect(last!.headers['ratelimit-remaining']).toBe('0');
    expect(Number(last!.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(0);
    // Another key, even from the same address and the same creator, has its own budget.
    const other = await api.get('/v1/collections', bearer(b.secret));
    expect(other.status).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('2');
  });

  it('limits refused authentications per address: past the budget every refusal from it is a 429, valid keys still pass, other addresses are untouched', async () => {
    const t = await start({ rateLimitPerKey: 3, rateLimitPerIp: 3, authFailuresPerIp: 5 });
    const owner = await signedInOwner(t);
    const good = await newKey(owner, { name: 'good', scopes: ['collections:read'] });
    const api = new Client(t);
    api.remoteAddress = '203.0.113.50';
    const statuses: number[] = [];
    let last: Reply | undefined;
    for (let i = 0; i < 10; i++) {
      last = await api.get('/v1/collections', bearer(issueToken('live', newId('key'))));
      statuses.push(last.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
    expectError(last!, 429, 'RATE_LIMITED');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(last!.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(last!.headers['ratelimit-limit']).toBe('5');
    expect(last!.headers['ratelimit-remaining']).toBe('0');
    // A valid key from that address is still served: one stuck program does not lock out the others behind it.
    expect((await api.get('/v1/collections', bearer(good.secret))).status).toBe(200);
    expectError(await api.get('/v1/collections', bearer(issueToken('live', newId('key')))), 429, 'RATE_LIMITED');
    // Garbage (checksum fails) and an unknown session count too (see the next test for no credential).
    const other = new Client(t);
    other.remoteAddress = '203.0.113.51';
    expectError(await other.get('/v1/collections', bearer('pb_live_garbage')), 401, 'INVALID_API_KEY');
    expectError(await other.get('/v1/collections', { cookie: 'plainbase_session=nope', 'x-baas-workspace': owner.workspaceId! }), 401, 'UNAUTHENTICATED');
    // Other addresses, and routes that need no credential, are not affected.
    expect((await api.get('/healthz')).status).toBe(200);
    const fresh = new Client(t);
    fresh.remoteAddress = '203.0.113.52';
    expect((await fresh.get('/v1/collections', bearer(good.secret))).status).toBe(200);
    // The window is one minute: then a refusal is a plain 401 again.
    t.clock.advance(60_000);
    expectError(await api.get('/v1/collections', bearer(issueToken('live', newId('key')))), 401, 'INVALID_API_KEY');
  });

  it('counts only refusals of requests that presented a credential: a signed-out page polling its session uses no budget', async () => {
    const t = await start({ authFailuresPerIp: 3 });
    const owner = await signedInOwner(t);
    const good = await newKey(owner, { name: 'good', scopes: ['collections:read'] });
    const office = new Client(t);
    office.remoteAddress = '203.0.113.70';
    // Far more refusals than the budget, none of them presenting a key or a session.
    for (let i = 0; i < 10; i++) {
      expectError(await office.get('/v1/auth/session'), 401, 'UNAUTHENTICATED');
      expectError(await office.get('/v1/collections'), 401, 'UNAUTHENTICATED');
      // An empty session cookie is no session either.
      expectError(await office.get('/v1/auth/session', { cookie: 'plainbase_session=' }), 401, 'UNAUTHENTICATED');
    }
    expect((await office.get('/v1/collections', bearer(good.secret))).status).toBe(200);
    // Refusals of presented credentials still count: an ended session, then bad keys.
    expectError(await office.get('/v1/auth/session', { cookie: 'plainbase_session=ended' }), 401, 'UNAUTHENTICATED');
    expectError(await office.get('/v1/collections', bearer(issueToken('live', newId('key')))), 401, 'INVALID_API_KEY');
    expectError(await office.get('/v1/collections', bearer('pb_live_garbage')), 401, 'INVALID_API_KEY');
    expect((await office.get('/v1/collections', bearer(good.secret))).status).toBe(200);
    expectError(await office.get('/v1/auth/session'), 429, 'RATE_LIMITED');
  });

  it('counts nothing when PLAINBASE_AUTH_FAILURES_PER_IP is 0', async () => {
    const t = await start({ authFailuresPerIp: 0 });
    const api = new Client(t);
    api.remoteAddress = '203.0.113.60';
    const statuses = new Set<number>();
    for (let i = 0; i < 40; i++) statuses.add((await api.get('/v1/collections', bearer(issueToken('live', newId('key'))))).status);
    expect([...statuses]).toEqual([401]);
  });
});
