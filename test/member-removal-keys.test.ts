import { afterEach, expect, it } from 'vitest';
import { addMember, allAuditEntries, Client, expectError, signedInOwner, type Reply } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
const MEMBER_PASSWORD = 'member password 1';

/**
 * Removing a person from a workspace revokes, for good, every key they created there; their
 * service accounts' keys and their keys in other workspaces stay; a re-invite brings back their
 * role, never those keys. Two workspaces side by side, and a removal racing key creation.
 */
describeEachEngine('removing a person revokes their keys', (engine) => {
  let t: TestApp;
  afterEach(async () => { await t?.close(); });

  /** Invites `email` again with `role` and has them accept with their existing password. */
  async function reinvite(admin: Client, email: string, role: 'admin' | 'editor' | 'viewer'): Promise<Client> {
    const invite = await admin.post('/v1/invites', { email, role });
    expect(invite.status).toBe(201);
    const member = new Client(t);
    expect((await member.post(`/v1/invites/${invite.body.token}/accept`, { password: MEMBER_PASSWORD })).status).toBe(200);
    member.workspaceId = admin.workspaceId;
    return member;
  }

  it('revokes their keys in that workspace only, audited; a re-invite does not bring them back', async () => {
    t = await startTestApp(engine);
    const owner = await signedInOwner(t);
    const workspaceB = (await owner.post('/v1/workspaces', { name: 'B' })).body.id as string;
    const ownerInB = new Client(t);
    ownerInB.cookie = owner.cookie;
    ownerInB.workspaceId = workspaceB;
    await owner.post('/v1/collections', { name: 'leads' });

    const admin = await addMember(t, owner, 'ada@example.com', 'admin');
    const adminInB = await reinvite(ownerInB, 'ada@example.com', 'admin');
    const keysInA = await Promise.all(['sync', 'backup'].map(async (name) => (await admin.post('/v1/keys', { name, scopes: ['records:read', 'records:create'] })).body));
    const keyInB = (await adminInB.post('/v1/keys', { name: 'b', scopes: ['collections:read'] })).body;
    const robot = (await admin.post('/v1/service-accounts', { name: 'robot', role: 'editor' })).body;
    const robotKey = (await admin.post('/v1/keys', { name: 'robot', scopes: ['records:read'], serviceAccountId: robot.id })).body;
    // A key revoked before the removal is left as it was.
    const oldKey = (await admin.post('/v1/keys', { name: 'old', scopes: ['records:read'] })).body;
    expect((await admin.post(`/v1/keys/${oldKey.id}/revoke`)).status).toBe(200);
    const api = new Client(t);
    for (const key of [...keysInA, keyInB, robotKey]) expect((await api.get('/v1/me', bearer(key.secret))).status).toBe(200);

    expect((await owner.delete(`/v1/members/${admin.personId}`)).status).toBe(204);
    for (const key of keysInA) expectError(await api.get('/v1/collections/leads/records', bearer(key.secret)), 401, 'INVALID_API_KEY');
    // Another workspace, and a service account's key, depend on no one membership here.
    expect((await api.get('/v1/me', bearer(keyInB.secret))).status).toBe(200);
    expect((await api.get('/v1/collections/leads/records', bearer(robotKey.secret))).status).toBe(200);

    const listed = (await owner.get('/v1/keys')).body.data as { id: string; state: string }[];
    for (const key of keysInA) expect(listed.find((entry) => entry.id === key.id)?.state).toBe('revoked');
    const revocations = (await allAuditEntries(owner, 'action=key.revoked')).filter((entry) => entry.target.id !== oldKey.id);
    expect(revocations.map((entry) => [entry.target.id, entry.actor.id, entry.details]).sort()).toEqual(
      keysInA.map((key) => [key.id, owner.personId, { reason: 'member_removed', personId: admin.personId }]).sort(),
    );
    // Nothing of that in workspace B's log.
    expect((await allAuditEntries(ownerInB, 'action=key.revoked')).length).toBe(0);

    // Back as admin: the role returns, the keys do not, and they cannot be revived by rotation.
    const back = await reinvite(owner, 'ada@example.com', 'admin');
    for (const key of keysInA) {
      expectError(await api.get('/v1/me', bearer(key.secret)), 401, 'INVALID_API_KEY');
      expectError(await back.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 0 }), 409, 'CONFLICT');
      expect((await back.get(`/v1/keys/${key.id}`)).body.state).toBe('revoked');
    }
    expect((await back.get(`/v1/keys/${oldKey.id}`)).body.state).toBe('revoked');
    // A new key works as any other.
    const fresh = (await back.post('/v1/keys', { name: 'new', scopes: ['records:read'] })).body;
    expect((await api.get('/v1/collections/leads/records', bearer(fresh.secret))).status).toBe(200);
  });

  it('leaves no working key behind when the removal races the person creating keys', async () => {
    t = await startTestApp(engine);
    const owner = await signedInOwner(t);
    const api = new Client(t);
    for (let round = 0; round < 4; round++) {
      const email = `racer${round}@example.com`;
      const racer = await addMember(t, owner, email, 'editor');
      const [removal, ...created] = await Promise.all<Reply>([
        owner.delete(`/v1/members/${racer.personId}`),
        ...Array.from({ length: 6 }, (_, i) => racer.post('/v1/keys', { name: `k${i}`, scopes: ['records:read'] })),
      ]);
      expect(removal!.status).toBe(204);
      // Each creation came before the removal (and was revoked with the others) or after it (refused).
      for (const reply of created) expect([201, 404]).toContain(reply.status);
      await reinvite(owner, email, 'editor');
      for (const reply of created.filter((entry) => entry.status === 201)) {
        expectError(await api.get('/v1/me', bearer(reply.body.secret)), 401, 'INVALID_API_KEY');
      }
    }
  });
});
