import { afterEach, beforeEach, expect, it } from 'vitest';
import { addMember, allAuditEntries, Client, expectError, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

describeEachEngine('service accounts', (engine) => {
  let t: TestApp;
  beforeEach(async () => { t = await startTestApp(engine); });
  afterEach(async () => { await t.close(); });

  it('admins create, list, rename, change the role of and delete service accounts; never owner', async () => {
    const owner = await signedInOwner(t);
    const admin = await addMember(t, owner, 'ada@example.com', 'admin');
    const created = await admin.post('/v1/service-accounts', { name: 'Zapier sync', role: 'editor' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^sa_[0-9a-z]{26}$/),
      name: 'Zapier sync',
      role: 'editor',
      createdBy: admin.personId,
      createdAt: '2026-11-22T10:00:00.000Z',
    });
    const sa = created.body;
    expect((await owner.get('/v1/service-accounts')).body).toEqual({ data: [sa], nextCursor: null });

    const renamed = await admin.patch(`/v1/service-accounts/${sa.id}`, { name: 'Zapier' });
    expect(renamed.body).toMatchObject({ id: sa.id, name: 'Zapier', role: 'editor' });
    const demoted = await admin.patch(`/v1/service-accounts/${sa.id}`, { role: 'viewer' });
    expect(demoted.body).toMatchObject({ name: 'Zapier', role: 'viewer' });
    expect((await owner.patch(`/v1/service-accounts/${sa.id}`, { role: 'admin' })).body.role).toBe('admin');

    expectError(await admin.post('/v1/service-accounts', { name: 'boss', role: 'owner' }), 400, 'INVALID_REQUEST');
    expectError(await admin.patch(`/v1/service-accounts/${sa.id}`, { role: 'owner' }), 400, 'INVALID_REQUEST');
    expectError(await admin.patch(`/v1/service-accounts/${sa.id}`, {}), 400, 'INVALID_REQUEST');
    expectError(await admin.post('/v1/service-accounts', { name: '', role: 'viewer' }), 400, 'INVALID_REQUEST');
    expectError(await admin.post('/v1/service-accounts', { name: 'x', role: 'viewer', extra: 1 }), 400, 'INVALID_REQUEST');
    expect((await owner.get('/v1/service-accounts')).body.data[0].role).toBe('admin');

    expect((await admin.delete(`/v1/service-accounts/${sa.id}`)).status).toBe(204);
    expect((await owner.get('/v1/service-accounts')).body.data).toEqual([]);
    expectError(await admin.delete(`/v1/service-accounts/${sa.id}`), 404, 'NOT_FOUND');
    expectError(await admin.patch(`/v1/service-accounts/${sa.id}`, { name: 'back' }), 404, 'NOT_FOUND');

    const actions = (await allAuditEntries(owner, 'action=service_account.*')).map((e) => e.action);
    expect(actions).toEqual(['service_account.deleted', 'service_account.updated', 'service_account.updated', 'service_account.updated', 'service_account.created']);
  });

  it('editors and viewers cannot manage service accounts (403), nor issue keys for them', async () => {
    const owner = await signedInOwner(t);
    const editor = await addMember(t, owner, 'ed@example.com', 'editor');
    const viewer = await addMember(t, owner, 'vera@example.com', 'viewer');
    const { body: sa } = await owner.post('/v1/service-accounts', { name: 'robot', role: 'editor' });
    for (const member of [editor, viewer]) {
      expectError(await member.get('/v1/service-accounts'), 403, 'FORBIDDEN');
      expectError(await member.post('/v1/service-accounts', { name: 'mine', role: 'viewer' }), 403, 'FORBIDDEN');
      expectError(await member.patch(`/v1/service-accounts/${sa.id}`, { role: 'admin' }), 403, 'FORBIDDEN');
      expectError(await member.delete(`/v1/service-accounts/${sa.id}`), 403, 'FORBIDDEN');
    }
    expectError(await editor.post('/v1/keys', { name: 'k', scopes: ['records:read'], serviceAccountId: sa.id }), 403, 'FORBIDDEN');
    // Nothing changed.
    expect((await owner.get('/v1/service-accounts')).body.data).toEqual([sa]);
    // Another workspace's service account is unknown here.
    const { body: other } = await owner.post('/v1/workspaces', { name: 'second' });
    const elsewhere = new Client(t);
    elsewhere.cookie = owner.cookie;
    elsewhere.workspaceId = other.id;
    expectError(await elsewhere.patch(`/v1/service-accounts/${sa.id}`, { name: 'x' }), 404, 'NOT_FOUND');
    expectError(await elsewhere.post('/v1/keys', { name: 'k', scopes: ['records:read'], serviceAccountId: sa.id }), 404, 'NOT_FOUND');
  });

  it("a service account's keys follow its role at once, and cannot be granted more than it", async () => {
    const owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
    const { body: sa } = await owner.post('/v1/service-accounts', { name: 'robot', role: 'editor' });
    const created = await owner.post('/v1/keys', { name: 'robot key', scopes: ['records:read', 'records:create'], serviceAccountId: sa.id });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ serviceAccountId: sa.id, createdBy: owner.personId });
    const key = created.body;
    const api = new Client(t);
    expect((await api.post('/v1/collections/leads/records', { data: { n: 1 } }, bearer(key.secret))).status).toBe(201);
    expect((await api.get('/v1/me', bearer(key.secret))).body).toMatchObject({ role: 'editor', effectiveScopes: ['records:read', 'records:create'], suppressed: [] });

    await owner.patch(`/v1/service-accounts/${sa.id}`, { role: 'viewer' });
    const refused = expectError(await api.post('/v1/collections/leads/records', { data: { n: 2 } }, bearer(key.secret)), 403, 'MISSING_SCOPE');
    expect(refused.details).toEqual({ requiredScope: 'records:create', reason: expect.stringMatching(/service account.*viewer/) });
    expect((await api.get('/v1/collections/leads', bearer(key.secret))).status).toBe(200);
    expect((await api.get('/v1/me', bearer(key.secret))).body).toMatchObject({
      role: 'viewer',
      grantedScopes: ['records:read', 'records:create'],
      effectiveScopes: ['records:read'],
      suppressed: [{ scope: 'records:create', reason: expect.stringContaining('viewer') }],
    });
    await owner.patch(`/v1/service-accounts/${sa.id}`, { role: 'editor' });
    expect((await api.post('/v1/collections/leads/records', { data: { n: 3 } }, bearer(key.secret))).status).toBe(201);

    // Scopes beyond the service account's role are refused at creation, even to the owner.
    await owner.patch(`/v1/service-accounts/${sa.id}`, { role: 'viewer' });
    const beyond = expectError(await owner.post('/v1/keys', { name: 'too much', scopes: ['records:read', 'files:write'], serviceAccountId: sa.id }), 403, 'FORBIDDEN');
    expect(beyond.message).toContain('files:write');
    expect((await owner.post('/v1/keys', { name: 'reader', scopes: ['records:read', 'files:read'], serviceAccountId: sa.id })).status).toBe(201);
    expectError(await owner.post('/v1/keys', { name: 'k', scopes: ['records:read'], serviceAccountId: 'sa_00000000000000000000000000' }), 404, 'NOT_FOUND');
  });

  it("keys depend on no person: they keep working when their creator leaves, and record the service account as who they act for", async () => {
    const owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
    const admin = await addMember(t, owner, 'ada@example.com', 'admin');
    const { body: sa } = await admin.post('/v1/service-accounts', { name: 'robot', role: 'editor' });
    const { body: key } = await admin.post('/v1/keys', { name: 'robot key', scopes: ['records:create'], serviceAccountId: sa.id });
    const personal = (await admin.post('/v1/keys', { name: 'personal', scopes: ['records:create'] })).body;
    const api = new Client(t);

    // Demoting or removing the admin changes nothing for the service account's key.
    await owner.patch(`/v1/members/${admin.personId}`, { role: 'viewer' });
    expect((await api.post('/v1/collections/leads/records', { data: { n: 1 } }, bearer(key.secret))).status).toBe(201);
    expectError(await api.post('/v1/collections/leads/records', { data: { n: 1 } }, bearer(personal.secret)), 403, 'MISSING_SCOPE');
    expect((await owner.delete(`/v1/members/${admin.personId}`)).status).toBe(204);
    const { body: record } = await api.post('/v1/collections/leads/records', { data: { n: 2 } }, bearer(key.secret));
    expect(record.id).toMatch(/^rec_/);
    expectError(await api.get('/v1/me', bearer(personal.secret)), 401, 'INVALID_API_KEY');
    expect((await api.get('/v1/me', bearer(key.secret))).body.role).toBe('editor');

    // An admin who did not create it still sees and manages it.
    expect((await owner.get(`/v1/keys/${key.id}`)).body).toMatchObject({ serviceAccountId: sa.id, createdBy: admin.personId, state: 'active' });
    const [entry] = await allAuditEntries(owner, `actor=${key.id}`);
    expect(entry).toMatchObject({ action: 'record.created', actor: { type: 'key', id: key.id }, target: { type: 'record', id: record.id } });
    expect(entry.details.via).toEqual({ type: 'service_account', id: sa.id });
  });

  it('deleting a service account stops its keys at once; they show as revoked', async () => {
    const owner = await signedInOwner(t);
    const { body: sa } = await owner.post('/v1/service-accounts', { name: 'robot', role: 'editor' });
    const { body: one } = await owner.post('/v1/keys', { name: 'one', scopes: ['records:read'], serviceAccountId: sa.id });
    const { body: two } = await owner.post('/v1/keys', { name: 'two', scopes: ['collections:read'], serviceAccountId: sa.id });
    const { body: mine } = await owner.post('/v1/keys', { name: 'mine', scopes: ['collections:read'] });
    const graced = (await owner.post(`/v1/keys/${two.id}/rotate`, { gracePeriodSeconds: 3600 })).body.secret;
    const api = new Client(t);
    expect((await api.get('/v1/me', bearer(one.secret))).status).toBe(200);

    expect((await owner.delete(`/v1/service-accounts/${sa.id}`)).status).toBe(204);
    for (const secret of [one.secret, two.secret, graced]) expectError(await api.get('/v1/me', bearer(secret)), 401, 'INVALID_API_KEY');
    expect((await api.get('/v1/me', bearer(mine.secret))).status).toBe(200);
    const states = Object.fromEntries((await owner.get('/v1/keys')).body.data.map((k: any) => [k.name, k.state]));
    expect(states).toEqual({ one: 'revoked', two: 'revoked', mine: 'active' });
    // No new key for a deleted service account.
    expectError(await owner.post('/v1/keys', { name: 'late', scopes: ['records:read'], serviceAccountId: sa.id }), 404, 'NOT_FOUND');
    const [deleted] = await allAuditEntries(owner, 'action=service_account.deleted');
    expect(deleted.details.revokedKeys.sort()).toEqual([one.id, two.id].sort());
  });
});
