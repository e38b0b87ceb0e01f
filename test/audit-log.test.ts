import { afterEach, beforeEach, expect, it } from 'vitest';
import { prepareFirstOwner } from '../src/modules/setup/first-owner.js';
import { addMember, allAuditEntries, Client, expectError, OWNER, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const SECOND = 1000;

describeEachEngine('audit log', (engine) => {
  let t: TestApp;
  beforeEach(async () => { t = await startTestApp(engine); });
  afterEach(async () => { await t?.close(); });

  it('answers newest first and pages through every entry exactly once', async () => {
    const owner = await signedInOwner(t);
    const invites: string[] = [];
    for (let i = 0; i < 12; i++) {
      t.clock.advance(SECOND);
      invites.push((await owner.post('/v1/invites', { email: `p${i}@example.com`, role: 'viewer' })).body.id);
    }
    for (const id of invites.slice(0, 5)) {
      t.clock.advance(SECOND);
      expect((await owner.delete(`/v1/invites/${id}`)).status).toBe(204);
    }

    const whole = await owner.get('/v1/audit-log?limit=1000');
    expect(whole.status).toBe(200);
    expect(whole.body.nextCursor).toBeNull();
    const all: any[] = whole.body.data;
    // workspace.created + auth.signed_in + 12 invite.created + 5 invite.revoked
    expect(all).toHaveLength(19);
    expect(all[0]).toMatchObject({ action: 'invite.revoked', target: { type: 'invite', id: invites[4] } });
    expect(all.at(-1)).toMatchObject({ action: 'workspace.created' });
    for (let i = 1; i < all.length; i++) {
      expect(all[i - 1].id > all[i].id).toBe(true);
      expect(all[i - 1].at >= all[i].at).toBe(true);
    }
    expect(all[0].id).toMatch(/^aud_[0-9a-z]{26}$/);
    expect(all[0].at).toBe(t.clock.now().toISOString());

    const defaultPage = await owner.get('/v1/audit-log');
    expect(defaultPage.body.data).toEqual(all);

    for (const size of [1, 4, 19, 50]) {
      const snapshot: string[] = (await owner.get('/v1/audit-log?limit=1000')).body.data.map((e: any) => e.id);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const reply: any = await owner.get(`/v1/audit-log?limit=${size}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(reply.status).toBe(200);
        expect(reply.body.data.length).toBeLessThanOrEqual(size);
        seen.push(...reply.body.data.map((e: any) => e.id));
        cursor = reply.body.nextCursor;
        pages++;
        if (pages === 2) {
          // Entries written while paging are newer: they do not shift the pages still to come.
          t.clock.advance(SECOND);
          await owner.post('/v1/invites', { email: `during${size}@example.com`, role: 'viewer' });
        }
      } while (cursor);
      expect(seen).toEqual(snapshot);
      expect(pages).toBe(Math.ceil(snapshot.length / size));
    }
  });

  it('filters by actor, exact action, action prefix, since and until', async () => {
    const owner = await signedInOwner(t);
    t.clock.advance(SECOND);
    const admin = await addMember(t, owner, 'admin@example.com', 'admin');
    t.clock.advance(SECOND);
    const editor = await addMember(t, owner, 'editor@example.com', 'editor');
    t.clock.advance(SECOND);
    const middle = t.clock.now().toISOString();
    expect((await admin.patch(`/v1/members/${editor.personId}`, { role: 'viewer' })).status).toBe(200);
    t.clock.advance(SECOND);
    expect((await admin.post('/v1/invites', { email: 'later@example.com', role: 'viewer' })).status).toBe(201);
    t.clock.advance(SECOND);
    const end = t.clock.now().toISOString();
    expect((await owner.delete(`/v1/members/${editor.personId}`)).status).toBe(204);

    const everything = await allAuditEntries(owner);
    const actions = (entries: any[]) => entries.map((e) => e.action);
    expect(actions(everything)).toEqual([
      'member.removed', 'invite.created', 'member.role_changed',
      'invite.accepted', 'invite.created', 'invite.accepted', 'invite.created',
      'auth.signed_in', 'workspace.created',
    ]);

    const byAdmin = await allAuditEntries(owner, `actor=${admin.personId}`);
    expect(actions(byAdmin)).toEqual(['invite.created', 'member.role_changed', 'invite.accepted']);
    expect(byAdmin.every((e) => e.actor.id === admin.personId && e.actor.type === 'person')).toBe(true);
    expect(await allAuditEntries(owner, 'actor=per_00000000000000000000000000')).toEqual([]);

    expect(actions(await allAuditEntries(owner, 'action=invite.created'))).toEqual(['invite.created', 'invite.created', 'invite.created']);
    expect(actions(await allAuditEntries(owner, 'action=member.*'))).toEqual(['member.removed', 'member.role_changed']);
    expect(actions(await allAuditEntries(owner, 'action=invite.*'))).toEqual(['invite.created', 'invite.accepted', 'invite.created', 'invite.accepted', 'invite.created']);
    // An exact action is not a prefix: `member` alone matches nothing.
    expect(await allAuditEntries(owner, 'action=member')).toEqual([]);
    expect(await allAuditEntries(owner, 'action=member.rem*')).toHaveLength(1);

    // since is inclusive, until exclusive, so consecutive windows neither overlap nor leave gaps.
    const sinceMiddle = await allAuditEntries(owner, `since=${middle}`);
    expect(actions(sinceMiddle)).toEqual(['member.removed', 'invite.created', 'member.role_changed']);
    // The same instant written without milliseconds, or in another zone, filters the same.
    const sameInstants = [middle.replace('.000Z', 'Z'), new Date(Date.parse(middle)).toISOString().replace(/T(\d\d)/, (_, h) => `T${String(Number(h) + 2).padStart(2, '0')}`).replace('.000Z', '+02:00')];
    for (const same of sameInstants) {
      expect(Date.parse(same)).toBe(Date.parse(middle));
      expect(await allAuditEntries(owner, `since=${encodeURIComponent(same)}`)).toEqual(sinceMiddle);
    }
    const untilMiddle = await allAuditEntries(owner, `until=${middle}`);
    expect([...sinceMiddle, ...untilMiddle].map((e) => e.id)).toEqual(everything.map((e) => e.id));
    expect(actions(await allAuditEntries(owner, `since=${middle}&until=${end}`))).toEqual(['invite.created', 'member.role_changed']);
    expect(actions(await allAuditEntries(owner, `since=${middle}&until=${end}&actor=${admin.personId}&action=member.*`))).toEqual(['member.role_changed']);

    // Filters and paging together.
    const first = await owner.get('/v1/audit-log?action=invite.*&limit=2');
    expect(first.body.data).toHaveLength(2);
    const rest = await owner.get(`/v1/audit-log?action=invite.*&limit=10&cursor=${first.body.nextCursor}`);
    expect(actions(rest.body.data)).toEqual(['invite.created', 'invite.accepted', 'invite.created']);
    expect(rest.body.nextCursor).toBeNull();
  });

  it('records where each change came from: ip, user agent and the request id of the request', async () => {
    const owner = await signedInOwner(t);
    owner.remoteAddress = '198.51.100.44';
    const headers = { 'user-agent': 'Mozilla/5.0 (AuditTest)' };
    const created = await owner.post('/v1/workspaces', { name: 'Traced' }, headers);
    owner.workspaceId = created.body.id;
    const invite = await owner.post('/v1/invites', { email: 'traced@example.com', role: 'editor' }, headers);
    const invitee = new Client(t);
    invitee.remoteAddress = '203.0.113.61';
    const accepted = await invitee.post(`/v1/invites/${invite.body.token}/accept`, { name: 'Traced', password: 'traced password' }, { 'user-agent': 'Other/2' });
    const patched = await owner.patch(`/v1/members/${accepted.body.person.id}`, { role: 'viewer' }, headers);
    const removed = await owner.delete(`/v1/members/${accepted.body.person.id}`, headers);

    const byAction = new Map((await allAuditEntries(owner)).map((e) => [e.action, e]));
    const expected: [string, any, string, string][] = [
      ['workspace.created', created, '198.51.100.44', 'Mozilla/5.0 (AuditTest)'],
      ['invite.created', invite, '198.51.100.44', 'Mozilla/5.0 (AuditTest)'],
      ['invite.accepted', accepted, '203.0.113.61', 'Other/2'],
      ['member.role_changed', patched, '198.51.100.44', 'Mozilla/5.0 (AuditTest)'],
      ['member.removed', removed, '198.51.100.44', 'Mozilla/5.0 (AuditTest)'],
    ];
    for (const [action, reply, ip, userAgent] of expected) {
      expect(reply.headers['x-request-id']).toMatch(/^req_[0-9a-z]{26}$/);
      expect(byAction.get(action)).toMatchObject({ ip, userAgent, requestId: reply.headers['x-request-id'] });
    }
  });

  it('keeps no secret: no password, invite token, session or setup token in any audit row', async () => {
    const { setupToken } = await prepareFirstOwner(t.deps);
    const owner = new Client(t);
    const setup = await owner.post('/v1/auth/setup', { token: setupToken, email: OWNER.email, name: OWNER.name, password: OWNER.password });
    expect(setup.status).toBe(201);
    owner.workspaceId = setup.body.workspaces[0].id;
    const wrongPassword = 'a wrong password for the owner';
    expect((await new Client(t).post('/v1/auth/sign-in', { email: OWNER.email, password: wrongPassword })).status).toBe(401);
    expect((await owner.signIn(OWNER.email, OWNER.password)).status).toBe(200);
    const invite = await owner.post('/v1/invites', { email: 'new@example.com', role: 'admin' });
    const memberPassword = 'the new member password';
    const member = new Client(t);
    expect((await member.post(`/v1/invites/${invite.body.token}/accept`, { name: 'New', password: memberPassword })).status).toBe(200);
    member.workspaceId = owner.workspaceId;
    const pending = await member.post('/v1/invites', { email: 'pending@example.com', role: 'viewer' });
    expect((await member.post('/v1/auth/sign-out')).status).toBe(204);

    const rows = await t.deps.db.selectFrom('audit_log').selectAll().execute();
    expect(rows.map((row) => row.action).sort()).toEqual([
      'auth.sign_in_failed', 'auth.signed_in', 'invite.accepted', 'invite.created', 'invite.created', 'workspace.created',
    ]);
    const everything = JSON.stringify(rows) + JSON.stringify(await allAuditEntries(owner));
    const secrets = [setupToken!, OWNER.password, wrongPassword, invite.body.token, pending.body.token, memberPassword, owner.cookie!];
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });

  it('is for owners and admins only', async () => {
    const owner = await signedInOwner(t);
    const admin = await addMember(t, owner, 'admin@example.com', 'admin');
    const editor = await addMember(t, owner, 'editor@example.com', 'editor');
    const viewer = await addMember(t, owner, 'viewer@example.com', 'viewer');

    expect((await admin.get('/v1/audit-log')).status).toBe(200);
    expectError(await editor.get('/v1/audit-log'), 403, 'FORBIDDEN');
    expectError(await viewer.get('/v1/audit-log'), 403, 'FORBIDDEN');
    expectError(await viewer.get(`/v1/audit-log?actor=${viewer.personId}`), 403, 'FORBIDDEN');
  });
});
