import { afterEach, beforeEach, expect, it } from 'vitest';
import { createOwner } from '../src/modules/setup/first-owner.js';
import { addMember, allAuditEntries, Client, expectError, OWNER, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const DAY_MS = 24 * 3600 * 1000;
const NEW_PASSWORD = 'a new member password';

describeEachEngine('workspaces and members', (engine) => {
  let t: TestApp;
  beforeEach(async () => { t = await startTestApp(engine); });
  afterEach(async () => { await t?.close(); });

  /** Accepts an invite as somebody new; returns their signed-in client, named into the workspace. */
  async function accept(token: string, body: Record<string, unknown>, workspaceId: string | null) {
    const client = new Client(t);
    const reply = await client.post(`/v1/invites/${token}/accept`, body);
    client.workspaceId = workspaceId;
    return { client, reply };
  }

  it('walks a second workspace through invite, promotion, demotion and removal, all in the audit log', async () => {
    const owner = await signedInOwner(t);
    const firstWorkspace = owner.workspaceId!;

    const created = await owner.post('/v1/workspaces', { name: 'Research' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^ws_[0-9a-z]{26}$/), name: 'Research', role: 'owner', createdAt: t.clock.now().toISOString() });
    const workspaceId: string = created.body.id;
    const listed = await owner.get('/v1/workspaces');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      expect.objectContaining({ id: firstWorkspace, name: 'default', role: 'owner' }),
      { id: workspaceId, name: 'Research', role: 'owner', createdAt: created.body.createdAt },
    ]);
    expect(listed.body.nextCursor).toBeNull();

    owner.workspaceId = workspaceId;
    const invite = await owner.post('/v1/invites', { email: 'Ed@Example.com', role: 'editor' });
    expect(invite.status).toBe(201);
    expect(invite.body).toMatchObject({
      id: expect.stringMatching(/^inv_[0-9a-z]{26}$/),
      email: 'ed@example.com',
      role: 'editor',
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expiresAt: new Date(t.clock.now().getTime() + 7 * DAY_MS).toISOString(),
    });
    expect(invite.body.url).toBe(`${t.deps.config.publicUrl}/invite/${invite.body.token}`);

    const { client: ed, reply: accepted } = await accept(invite.body.token, { name: 'Ed', password: NEW_PASSWORD }, workspaceId);
    expect(accepted.status).toBe(200);
    expect(accepted.body.person).toMatchObject({ email: 'ed@example.com', name: 'Ed' });
    expect(accepted.body.workspaces).toEqual([expect.objectContaining({ id: workspaceId, role: 'editor' })]);
    expect(ed.cookie).not.toBeNull();
    const edId: string = accepted.body.person.id;

    const members = await ed.get('/v1/members');
    expect(members.status).toBe(200);
    expect(members.body.data).toEqual([
      { personId: owner.personId, email: OWNER.email, name: OWNER.name, role: 'owner', joinedAt: expect.any(String) },
      { personId: edId, email: 'ed@example.com', name: 'Ed', role: 'editor', joinedAt: t.clock.now().toISOString() },
    ]);
    expectError(await ed.post('/v1/invites', { email: 'early@example.com', role: 'viewer' }), 403, 'FORBIDDEN');

    const promoted = await owner.patch(`/v1/members/${edId}`, { role: 'admin' });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ personId: edId, role: 'admin' });
    const edInvite = await ed.post('/v1/invites', { email: 'vi@example.com', role: 'viewer' });
    expect(edInvite.status).toBe(201);
    expect(edInvite.body.invitedBy).toBe(edId);

    const demoted = await owner.patch(`/v1/members/${edId}`, { role: 'viewer' });
    expect(demoted.status).toBe(200);
    expect(demoted.body.role).toBe('viewer');
    // The role is read on every request: the very next one is refused.
    expectError(await ed.post('/v1/invites', { email: 'late@example.com', role: 'viewer' }), 403, 'FORBIDDEN');
    expect((await ed.get('/v1/members')).status).toBe(200);

    expect((await owner.delete(`/v1/members/${edId}`)).status).toBe(204);
    expectError(await ed.get('/v1/members'), 404, 'NOT_FOUND');
    expect((await ed.get('/v1/workspaces')).body.data).toEqual([]);
    expect((await owner.get('/v1/members')).body.data.map((m: any) => m.personId)).toEqual([owner.personId]);

    const log = await allAuditEntries(owner);
    const summary = log.map((e) => [e.action, e.actor.id, e.target?.id, e.details]).reverse();
    expect(summary).toEqual([
      ['workspace.created', owner.personId, workspaceId, { name: 'Research', owner: owner.personId }],
      ['invite.created', owner.personId, invite.body.id, { email: 'ed@example.com', role: 'editor' }],
      ['invite.accepted', edId, invite.body.id, { role: 'editor', newAccount: true }],
      ['member.role_changed', owner.personId, edId, { from: 'editor', to: 'admin' }],
      ['invite.created', edId, edInvite.body.id, { email: 'vi@example.com', role: 'viewer' }],
      ['member.role_changed', owner.personId, edId, { from: 'admin', to: 'viewer' }],
      ['member.removed', owner.personId, edId, { role: 'viewer' }],
    ]);
  });

  it('lets an invite expire after 7 days', async () => {
    const owner = await signedInOwner(t);
    const early = await owner.post('/v1/invites', { email: 'early@example.com', role: 'editor' });
    const late = await owner.post('/v1/invites', { email: 'late@example.com', role: 'editor' });

    t.clock.advance(7 * DAY_MS - 1000);
    expect((await accept(early.body.token, { name: 'Early', password: NEW_PASSWORD }, null)).reply.status).toBe(200);
    // The owner's own session (also 7 days) is about to end.
    expect((await owner.signIn(OWNER.email, OWNER.password)).status).toBe(200);
    expect((await owner.get('/v1/invites')).body.data.map((i: any) => i.id)).toEqual([late.body.id]);

    t.clock.advance(1000);
    expectError((await accept(late.body.token, { name: 'Late', password: NEW_PASSWORD }, null)).reply, 404, 'NOT_FOUND');
    expect((await owner.get('/v1/invites')).body.data).toEqual([]);
    expect((await owner.get('/v1/members')).body.data.map((m: any) => m.email)).toEqual([OWNER.email, 'early@example.com']);
  });

  it('accepts a token once', async () => {
    const owner = await signedInOwner(t);
    const invite = await owner.post('/v1/invites', { email: 'once@example.com', role: 'viewer' });
    expect((await accept(invite.body.token, { name: 'Once', password: NEW_PASSWORD }, null)).reply.status).toBe(200);
    expectError((await accept(invite.body.token, { name: 'Twice', password: NEW_PASSWORD }, null)).reply, 404, 'NOT_FOUND');
    expectError((await accept('no-such-token', { name: 'Nobody', password: NEW_PASSWORD }, null)).reply, 404, 'NOT_FOUND');
    expect((await owner.get('/v1/members')).body.data).toHaveLength(2);
  });

  it('asks someone who already has an account for their own password', async () => {
    const owner = await signedInOwner(t);
    const bob = { email: 'bob@example.com', password: 'bobs own password', name: 'Bob' };
    const { workspace: bobsWorkspace } = await createOwner(t.deps, bob);
    const invite = await owner.post('/v1/invites', { email: bob.email, role: 'editor' });

    const wrong = await accept(invite.body.token, { password: 'not bobs password' }, null);
    expectError(wrong.reply, 401, 'UNAUTHENTICATED');
    expect(wrong.client.cookie).toBeNull();

    const right = await accept(invite.body.token, { name: 'Ignored', password: bob.password }, owner.workspaceId);
    expect(right.reply.status).toBe(200);
    expect(right.reply.body.person).toMatchObject({ email: bob.email, name: 'Bob' });
    expect(right.reply.body.workspaces.map((w: any) => [w.id, w.role])).toEqual([
      [owner.workspaceId, 'editor'],
      [bobsWorkspace.id, 'owner'],
    ].sort((a, b) => a[0]!.localeCompare(b[0]!)));
    expect((await right.client.get('/v1/members')).status).toBe(200);
    const accepted = (await allAuditEntries(owner, 'action=invite.accepted'))[0];
    expect(accepted.details).toEqual({ role: 'editor', newAccount: false });
  });

  it('refuses to invite a member, and a new person without a name', async () => {
    const owner = await signedInOwner(t);
    expectError(await owner.post('/v1/invites', { email: OWNER.email.toUpperCase(), role: 'admin' }), 409, 'CONFLICT');

    const invite = await owner.post('/v1/invites', { email: 'nameless@example.com', role: 'viewer' });
    const nameless = expectError((await accept(invite.body.token, { password: NEW_PASSWORD }, null)).reply, 400, 'INVALID_REQUEST');
    expect(nameless.details?.field).toBe('body.name');
    const blank = expectError((await accept(invite.body.token, { name: '   ', password: NEW_PASSWORD }, null)).reply, 400, 'INVALID_REQUEST');
    expect(blank.details?.field).toBe('body.name');
    const weak = expectError((await accept(invite.body.token, { name: 'Nina', password: 'short' }, null)).reply, 400, 'INVALID_REQUEST');
    expect(weak.details?.field).toBe('body.password');
    // A refused acceptance leaves the invite usable.
    expect((await accept(invite.body.token, { name: 'Nina', password: NEW_PASSWORD }, null)).reply.status).toBe(200);
  });

  it('never makes or unmakes the owner through invites or role changes', async () => {
    const owner = await signedInOwner(t);
    const admin = await addMember(t, owner, 'admin@example.com', 'admin');
    const editor = await addMember(t, owner, 'editor@example.com', 'editor');

    expect(expectError(await owner.post('/v1/invites', { email: 'boss@example.com', role: 'owner' }), 400, 'INVALID_REQUEST').details?.field).toBe('body.role');
    expect(expectError(await owner.patch(`/v1/members/${editor.personId}`, { role: 'owner' }), 400, 'INVALID_REQUEST').details?.field).toBe('body.role');

    expectError(await admin.patch(`/v1/members/${owner.personId}`, { role: 'viewer' }), 403, 'FORBIDDEN');
    expectError(await owner.patch(`/v1/members/${owner.personId}`, { role: 'admin' }), 403, 'FORBIDDEN');
    expectError(await admin.delete(`/v1/members/${owner.personId}`), 403, 'FORBIDDEN');
    expectError(await owner.delete(`/v1/members/${owner.personId}`), 403, 'FORBIDDEN');
    // An admin manages everyone else.
    expect((await admin.patch(`/v1/members/${editor.personId}`, { role: 'viewer' })).body.role).toBe('viewer');
    expectError(await owner.patch('/v1/members/per_00000000000000000000000000', { role: 'viewer' }), 404, 'NOT_FOUND');
    expectError(await owner.delete('/v1/members/per_00000000000000000000000000'), 404, 'NOT_FOUND');

    const roles = (await owner.get('/v1/members')).body.data.map((m: any) => [m.personId, m.role]);
    expect(roles).toEqual([[owner.personId, 'owner'], [admin.personId, 'admin'], [editor.personId, 'viewer']]);
  });

  it('transfers ownership only by the owner and only to a member', async () => {
    const owner = await signedInOwner(t);
    const admin = await addMember(t, owner, 'admin@example.com', 'admin');
    const { person: outsider } = await createOwner(t.deps, { email: 'outsider@example.com', password: 'outsider password' });

    expectError(await admin.post('/v1/workspace/transfer-ownership', { personId: admin.personId }), 403, 'FORBIDDEN');
    expectError(await owner.post('/v1/workspace/transfer-ownership', { personId: outsider.id }), 404, 'NOT_FOUND');
    expectError(await owner.post('/v1/workspace/transfer-ownership', { personId: 'per_00000000000000000000000000' }), 404, 'NOT_FOUND');
    expectError(await owner.post('/v1/workspace/transfer-ownership', { personId: owner.personId }), 409, 'CONFLICT');

    const transfer = await owner.post('/v1/workspace/transfer-ownership', { personId: admin.personId });
    expect(transfer.status).toBe(204);
    const roles = (await owner.get('/v1/members')).body.data.map((m: any) => [m.personId, m.role]);
    expect(roles).toEqual([[owner.personId, 'admin'], [admin.personId, 'owner']]);
    expect((await admin.get('/v1/workspaces')).body.data[0].role).toBe('owner');

    // The former owner is an admin now: no second transfer, and the new owner is out of reach.
    expectError(await owner.post('/v1/workspace/transfer-ownership', { personId: owner.personId }), 403, 'FORBIDDEN');
    expectError(await owner.delete(`/v1/members/${admin.personId}`), 403, 'FORBIDDEN');
    expect((await owner.post('/v1/invites', { email: 'still@example.com', role: 'viewer' })).status).toBe(201);
    // …and the new owner can hand it back.
    expect((await admin.post('/v1/workspace/transfer-ownership', { personId: owner.personId })).status).toBe(204);

    const transfers = await allAuditEntries(owner, 'action=workspace.ownership_transferred');
    expect(transfers.map((e) => [e.actor.id, e.details])).toEqual([
      [admin.personId, { from: admin.personId, to: owner.personId, previousRole: 'admin' }],
      [owner.personId, { from: owner.personId, to: admin.personId, previousRole: 'admin' }],
    ]);
  });

  it('needs the workspace header on workspace routes, and membership of that workspace', async () => {
    const owner = await signedInOwner(t);
    const { workspace: other } = await createOwner(t.deps, { email: 'other@example.com', password: 'other password' });
    const workspaceId = owner.workspaceId;

    owner.workspaceId = null;
    for (const reply of [
      await owner.get('/v1/members'),
      await owner.get('/v1/invites'),
      await owner.get('/v1/audit-log'),
      await owner.post('/v1/invites', { email: 'x@example.com', role: 'viewer' }),
      await owner.post('/v1/workspace/transfer-ownership', { personId: owner.personId }),
    ]) {
      expect(expectError(reply, 400, 'INVALID_REQUEST').details?.field).toBe('headers.x-baas-workspace');
    }
    for (const header of [other.id, 'ws_00000000000000000000000000', 'not-a-workspace']) {
      owner.workspaceId = header;
      expectError(await owner.get('/v1/members'), 404, 'NOT_FOUND');
      expectError(await owner.post('/v1/invites', { email: 'x@example.com', role: 'viewer' }), 404, 'NOT_FOUND');
    }
    // Person routes do not need it.
    expect((await owner.get('/v1/workspaces')).status).toBe(200);
    owner.workspaceId = workspaceId;
    expect((await owner.get('/v1/members')).status).toBe(200);
  });

  it('keeps workspaces apart: members, invites and audit entries of another workspace are out of reach', async () => {
    const olive = await signedInOwner(t);
    const bobAccount = { email: 'bob@example.com', password: 'bobs own password', name: 'Bob' };
    const { person: bobPerson, workspace: bobsWorkspace } = await createOwner(t.deps, bobAccount);
    const bob = new Client(t);
    expect((await bob.signIn(bobAccount.email, bobAccount.password)).status).toBe(200);
    expect(bob.workspaceId).toBe(bobsWorkspace.id);
    const bobsMember = await addMember(t, bob, 'carol@example.com', 'editor');
    const bobsInvite = await bob.post('/v1/invites', { email: 'dave@example.com', role: 'viewer' });
    expect(bobsInvite.status).toBe(201);

    // Olive names Bob's workspace: it does not exist for her.
    olive.workspaceId = bobsWorkspace.id;
    expectError(await olive.get('/v1/members'), 404, 'NOT_FOUND');
    expectError(await olive.get('/v1/invites'), 404, 'NOT_FOUND');
    expectError(await olive.get('/v1/audit-log'), 404, 'NOT_FOUND');
    expectError(await olive.delete(`/v1/invites/${bobsInvite.body.id}`), 404, 'NOT_FOUND');
    expectError(await olive.patch(`/v1/members/${bobsMember.personId}`, { role: 'viewer' }), 404, 'NOT_FOUND');

    // Olive in her own workspace, aiming at Bob's things by id.
    olive.workspaceId = (await olive.get('/v1/workspaces')).body.data[0].id;
    expectError(await olive.patch(`/v1/members/${bobsMember.personId}`, { role: 'viewer' }), 404, 'NOT_FOUND');
    expectError(await olive.delete(`/v1/members/${bobsMember.personId}`), 404, 'NOT_FOUND');
    expectError(await olive.delete(`/v1/members/${bobPerson.id}`), 404, 'NOT_FOUND');
    expectError(await olive.delete(`/v1/invites/${bobsInvite.body.id}`), 404, 'NOT_FOUND');
    expectError(await olive.post('/v1/workspace/transfer-ownership', { personId: bobsMember.personId }), 404, 'NOT_FOUND');
    expect((await olive.get('/v1/members')).body.data.map((m: any) => m.email)).toEqual([OWNER.email]);
    expect((await olive.get('/v1/invites')).body.data).toEqual([]);
    const oliveLog = JSON.stringify(await allAuditEntries(olive));
    for (const foreign of [bobsWorkspace.id, bobsMember.personId, bobsInvite.body.id, 'carol@example.com', 'dave@example.com']) {
      expect(oliveLog).not.toContain(foreign);
    }

    // Bob's things are untouched.
    expect((await bob.get('/v1/members')).body.data.map((m: any) => [m.email, m.role])).toEqual([[bobAccount.email, 'owner'], ['carol@example.com', 'editor']]);
    expect((await bob.get('/v1/invites')).body.data.map((i: any) => i.id)).toEqual([bobsInvite.body.id]);
  });

  it('lists pending invites and revokes one', async () => {
    const owner = await signedInOwner(t);
    const first = await owner.post('/v1/invites', { email: 'first@example.com', role: 'viewer' });
    const second = await owner.post('/v1/invites', { email: 'second@example.com', role: 'admin' });
    const used = await owner.post('/v1/invites', { email: 'used@example.com', role: 'editor' });
    expect((await accept(used.body.token, { name: 'Used', password: NEW_PASSWORD }, null)).reply.status).toBe(200);

    const pending = await owner.get('/v1/invites');
    expect(pending.status).toBe(200);
    expect(pending.body.nextCursor).toBeNull();
    expect(pending.body.data).toEqual([
      { id: second.body.id, email: 'second@example.com', role: 'admin', createdAt: expect.any(String), expiresAt: second.body.expiresAt, invitedBy: owner.personId },
      { id: first.body.id, email: 'first@example.com', role: 'viewer', createdAt: expect.any(String), expiresAt: first.body.expiresAt, invitedBy: owner.personId },
    ]);
    // Tokens are shown once, when created.
    expect(JSON.stringify(pending.body)).not.toContain(first.body.token);

    expect((await owner.delete(`/v1/invites/${first.body.id}`)).status).toBe(204);
    expectError(await owner.delete(`/v1/invites/${first.body.id}`), 404, 'NOT_FOUND');
    expectError(await owner.delete(`/v1/invites/${used.body.id}`), 404, 'NOT_FOUND');
    expectError((await accept(first.body.token, { name: 'First', password: NEW_PASSWORD }, null)).reply, 404, 'NOT_FOUND');
    expect((await owner.get('/v1/invites')).body.data.map((i: any) => i.id)).toEqual([second.body.id]);

    const revoked = await allAuditEntries(owner, 'action=invite.revoked');
    expect(revoked).toEqual([expect.objectContaining({ actor: expect.objectContaining({ id: owner.personId }), target: { type: 'invite', id: first.body.id } })]);
  });

  it('lets viewers and editors see the members but not manage them', async () => {
    const owner = await signedInOwner(t);
    const viewer = await addMember(t, owner, 'viewer@example.com', 'viewer');
    const editor = await addMember(t, owner, 'editor@example.com', 'editor');

    for (const member of [viewer, editor]) {
      const members = await member.get('/v1/members');
      expect(members.status).toBe(200);
      expect(members.body.data).toHaveLength(3);
      expectError(await member.post('/v1/invites', { email: 'x@example.com', role: 'viewer' }), 403, 'FORBIDDEN');
      expectError(await member.get('/v1/invites'), 403, 'FORBIDDEN');
      expectError(await member.patch(`/v1/members/${viewer.personId}`, { role: 'editor' }), 403, 'FORBIDDEN');
      expectError(await member.delete(`/v1/members/${editor.personId}`), 403, 'FORBIDDEN');
      expectError(await member.post('/v1/workspace/transfer-ownership', { personId: member.personId }), 403, 'FORBIDDEN');
    }
    expect((await owner.get('/v1/members')).body.data.map((m: any) => m.role)).toEqual(['owner', 'viewer', 'editor']);
  });
});
