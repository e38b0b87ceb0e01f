import { afterEach, beforeEach, expect, it } from 'vitest';
import { Client, expectError, OWNER, inNewWorkspace, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const DAY_MS = 24 * 3600 * 1000;

/**
 * GET /v1/invites/{token}: the accept page reads which workspace, who invited, which email and
 * role, with the token as the only credential; every token accepting refuses, it refuses too.
 */
describeEachEngine('reading an invite by its token', (engine) => {
  let t: TestApp;
  beforeEach(async () => { t = await startTestApp(engine); });
  afterEach(async () => { await t?.close(); });

  async function invite(owner: Client, email: string, role = 'editor'): Promise<{ token: string; id: string; expiresAt: string }> {
    const reply = await owner.post('/v1/invites', { email, role });
    expect(reply.status).toBe(201);
    return reply.body;
  }

  it('names the workspace, the inviter, the email, the role and the expiry, and nothing else', async () => {
    const owner = await signedInOwner(t);
    const research = await owner.post('/v1/workspaces', { name: 'Research' });
    owner.workspaceId = research.body.id;
    const created = await invite(owner, 'Ed@Example.com');

    const anonymous = new Client(t);
    const read = await anonymous.get(`/v1/invites/${created.token}/accept`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ workspaceName: 'Research', inviterName: OWNER.name, email: 'ed@example.com', role: 'editor', expiresAt: created.expiresAt });
    expect(JSON.stringify(read.body)).not.toContain(created.token);
    // Reading does not use the invite up: it can still be accepted, once.
    expect((await anonymous.post(`/v1/invites/${created.token}/accept`, { name: 'Ed', password: 'a new member password' })).status).toBe(200);
    expectError(await new Client(t).get(`/v1/invites/${created.token}/accept`), 404, 'NOT_FOUND');
  });

  it('answers 404 NOT_FOUND, as accepting does, for a token unknown, revoked or expired', async () => {
    const owner = await signedInOwner(t);
    const anonymous = new Client(t);
    const unknown = expectError(await anonymous.get('/v1/invites/not-a-real-token/accept'), 404, 'NOT_FOUND');
    const acceptUnknown = expectError(await anonymous.post('/v1/invites/not-a-real-token/accept', { name: 'X', password: 'a new member password' }), 404, 'NOT_FOUND');
    expect(unknown.message).toBe(acceptUnknown.message);

    const revoked = await invite(owner, 'revoked@example.com');
    expect((await owner.delete(`/v1/invites/${revoked.id}`)).status).toBe(204);
    expectError(await anonymous.get(`/v1/invites/${revoked.token}/accept`), 404, 'NOT_FOUND');

    const expiring = await invite(owner, 'late@example.com', 'viewer');
    t.clock.advance(7 * DAY_MS - 1);
    expect((await anonymous.get(`/v1/invites/${expiring.token}/accept`)).status).toBe(200);
    t.clock.advance(1);
    expectError(await anonymous.get(`/v1/invites/${expiring.token}/accept`), 404, 'NOT_FOUND');
  });

  it('reads only the invite its token names: another workspace and its invites stay as they were', async () => {
    const owner = await signedInOwner(t);
    const mine = await invite(owner, 'mine@example.com', 'viewer');
    const neighbour = await inNewWorkspace(t, owner, 'Other');
    const theirs = await invite(neighbour, 'theirs@example.com', 'admin');
    const before = (await neighbour.get('/v1/invites')).body;

    const read = await new Client(t).get(`/v1/invites/${mine.token}/accept`);
    expect(read.body).toMatchObject({ workspaceName: 'default', email: 'mine@example.com', role: 'viewer' });
    expect((await new Client(t).get(`/v1/invites/${theirs.token}/accept`)).body).toMatchObject({ workspaceName: 'Other', email: 'theirs@example.com', role: 'admin' });
    expect((await neighbour.get('/v1/invites')).body).toEqual(before);
    expect((await neighbour.get('/v1/members')).body.data).toHaveLength(1);
  });

  it('answers hostile tokens with a 4xx, never a 500', async () => {
    await signedInOwner(t);
    const anonymous = new Client(t);
    const tokens = [
      'x'.repeat(201),
      'x'.repeat(100_000),
      encodeURIComponent("' OR 1=1 --"),
      encodeURIComponent('../../v1/keys'),
      '%00',
      '%ZZ',
      encodeURIComponent('\u{1F600}\u0000\uFFFF'),
      encodeURIComponent('%'),
      '__proto__',
    ];
    for (const token of tokens) {
      const reply = await anonymous.get(`/v1/invites/${token}/accept`);
      expect(reply.status, token.slice(0, 40)).toBeGreaterThanOrEqual(400);
      expect(reply.status, token.slice(0, 40)).toBeLessThan(500);
    }
  });
});
