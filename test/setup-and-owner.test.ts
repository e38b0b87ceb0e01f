import { afterEach, beforeEach, expect, it } from 'vitest';
import { prepareFirstOwner } from '../src/modules/setup/first-owner.js';
import { Client, expectError, sessionSetCookie } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const FIRST = { email: 'first@example.com', password: 'first owner password' };

describeEachEngine('first owner from the environment', (engine) => {
  let t: TestApp;
  beforeEach(async () => { t = await startTestApp(engine, { owner: FIRST }); });
  afterEach(async () => { await t?.close(); });

  it('creates the owner and the workspace "default" once, and issues no setup link', async () => {
    const first = await prepareFirstOwner(t.deps);
    expect(first.setupToken).toBeNull();
    expect(first.created).toMatchObject({ email: FIRST.email, name: 'first' });
    expect(first.created!.id).toMatch(/^per_[0-9a-z]{26}$/);

    const again = await prepareFirstOwner(t.deps);
    expect(again).toEqual({ created: null, setupToken: null });
    expect(await t.deps.db.selectFrom('people').select('id').execute()).toHaveLength(1);
    expect(await t.deps.db.selectFrom('workspaces').select('name').execute()).toEqual([{ name: 'default' }]);

    const client = new Client(t);
    const signIn = await client.post('/v1/auth/sign-in', FIRST);
    expect(signIn.status).toBe(200);
    expect(signIn.body.person.id).toBe(first.created!.id);
    expect(signIn.body.workspaces).toEqual([expect.objectContaining({ name: 'default', role: 'owner' })]);

    const setup = await client.get('/v1/auth/setup');
    expect(setup.status).toBe(200);
    expect(setup.body).toEqual({ pending: false });
  });
});

describeEachEngine('first owner through the setup link', (engine) => {
  let t: TestApp;
  beforeEach(async () => { t = await startTestApp(engine); });
  afterEach(async () => { await t?.close(); });

  it('says setup is pending, refuses a wrong token, accepts the printed one once', async () => {
    const { created, setupToken } = await prepareFirstOwner(t.deps);
    expect(created).toBeNull();
    expect(setupToken).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const client = new Client(t);
    expect((await client.get('/v1/auth/setup')).body).toEqual({ pending: true });

    const form = { email: 'Ada@Example.com', name: 'Ada', password: 'a long enough password' };
    const wrong = await client.post('/v1/auth/setup', { ...form, token: `${setupToken}x` });
    expectError(wrong, 404, 'NOT_FOUND');
    expect(sessionSetCookie(wrong)).toBeNull();
    expect((await client.get('/v1/auth/setup')).body).toEqual({ pending: true });

    const done = await client.post('/v1/auth/setup', { ...form, token: setupToken });
    expect(done.status).toBe(201);
    expect(done.body.person).toMatchObject({ email: 'ada@example.com', name: 'Ada' });
    expect(done.body.workspaces).toEqual([expect.objectContaining({ name: 'default', role: 'owner' })]);
    expect(sessionSetCookie(done)?.attributes.has('httponly')).toBe(true);

    // Signed in: the cookie opens the session and the new workspace.
    const session = await client.get('/v1/auth/session');
    expect(session.status).toBe(200);
    expect(session.body.person.id).toBe(done.body.person.id);
    client.workspaceId = done.body.workspaces[0].id;
    const members = await client.get('/v1/members');
    expect(members.status).toBe(200);
    expect(members.body.data).toEqual([expect.objectContaining({ personId: done.body.person.id, role: 'owner' })]);

    const second = await new Client(t).post('/v1/auth/setup', { ...form, email: 'eve@example.com', token: setupToken });
    expectError(second, 404, 'NOT_FOUND');
    expect((await client.get('/v1/auth/setup')).body).toEqual({ pending: false });
    expect(await t.deps.db.selectFrom('people').select('email').execute()).toEqual([{ email: 'ada@example.com' }]);

    // Once somebody exists, a restart issues no new link.
    expect(await prepareFirstOwner(t.deps)).toEqual({ created: null, setupToken: null });
  });

  it('keeps the token usable when the form is refused, and only the latest start\'s token works', async () => {
    const { setupToken: older } = await prepareFirstOwner(t.deps);
    const { setupToken: latest } = await prepareFirstOwner(t.deps);
    expect(latest).not.toBe(older);
    const client = new Client(t);
    const form = { email: 'ada@example.com', name: 'Ada', password: 'a long enough password' };

    expectError(await client.post('/v1/auth/setup', { ...form, token: older }), 404, 'NOT_FOUND');

    const short = await client.post('/v1/auth/setup', { ...form, password: 'short', token: latest });
    expect(expectError(short, 400, 'INVALID_REQUEST').details?.field).toBe('body.password');
    expect((await client.get('/v1/auth/setup')).body).toEqual({ pending: true });

    expect((await client.post('/v1/auth/setup', { ...form, token: latest })).status).toBe(201);
  });
});
