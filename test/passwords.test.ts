import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createOwner, prepareFirstOwner } from '../src/modules/setup/first-owner.js';
import { passwordProblem } from '../src/password-rules.js';
import { addMember, allAuditEntries, Client, expectError, OWNER, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

describe('the rules of a new password', () => {
  const email = 'ada.lovelace@example.com';

  it('refuses what is short, blank, the email, or common, and nothing else', () => {
    expect(passwordProblem('          ', email)).toBe('blank');
    expect(passwordProblem('\t\t\t\t\t     ', email)).toBe('blank');
    expect(passwordProblem('short', email)).toBe('too_short');
    // Characters, not UTF-16 units: five emoji are five characters.
    expect(passwordProblem('😀😀😀😀😀', email)).toBe('too_short');
    expect(passwordProblem(email, email)).toBe('is_email');
    expect(passwordProblem(' ADA.Lovelace@Example.com ', email)).toBe('is_email');
    expect(passwordProblem('ada.lovelace', email)).toBe('is_email');
    for (const common of ['password123', 'Password123', 'qwertyuiop', '1234567890', '1q2w3e4r5t', 'basketball', 'MANCHESTER']) {
      expect(passwordProblem(common, email), common).toBe('common');
    }
    // No composition rules: long passphrases in any script pass, with or without digits or symbols.
    for (const fine of ['correct horse battery', 'パスワードはとても長いです', 'aaaaaaaaab', 'ada lovelace 1815']) {
      expect(passwordProblem(fine, email), fine).toBeNull();
    }
  });

  it('applies to PLAINBASE_OWNER_PASSWORD at start, naming the variable and never echoing the value', () => {
    for (const [password, words] of [['          ', /only spaces/], ['password123', /most common/], ['owner@example.com', /email/]] as const) {
      let error: unknown = null;
      try {
        loadConfig({ PLAINBASE_OWNER_EMAIL: 'owner@example.com', PLAINBASE_OWNER_PASSWORD: password });
      } catch (caught) {
        error = caught;
      }
      expect(String(error)).toMatch(/^Error: PLAINBASE_OWNER_PASSWORD: /);
      expect(String(error)).toMatch(words);
      if (password.trim()) expect(String(error)).not.toContain(password);
    }
  });
});

describeEachEngine('passwords', (engine) => {
  let t: TestApp;
  afterEach(async () => { await t?.close(); });

  it('hashes at the real cost (scrypt N=2^15) unless a test lowers it, and verifies a hash of either cost', async () => {
    expect(loadConfig({}).passwordHashCost).toBe(15);
    expect(loadConfig({ PLAINBASE_TEST_PASSWORD_HASH_COST: '10' }).passwordHashCost).toBe(10);
    t = await startTestApp(engine, { passwordHashCost: loadConfig({}).passwordHashCost });
    await createOwner(t.deps, OWNER);
    const stored = await t.deps.db.selectFrom('people').select('password_hash').executeTakeFirstOrThrow();
    expect(stored.password_hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect((await new Client(t).signIn(OWNER.email, OWNER.password)).status).toBe(200);
    expect((await new Client(t).signIn(OWNER.email, 'not the password at all')).status).toBe(401);
  });

  it('refuses a bad password at first-owner setup, with the field and the rule, and creates nobody', async () => {
    t = await startTestApp(engine);
    const { setupToken } = await prepareFirstOwner(t.deps);
    const client = new Client(t);
    const setup = (password: string) => client.post('/v1/auth/setup', { token: setupToken, email: OWNER.email, name: OWNER.name, password });
    for (const [password, reason] of [['          ', 'blank'], ['password123', 'common'], [OWNER.email, 'is_email'], ['too short', 'too_short']] as const) {
      const error = expectError(await setup(password), 400, 'INVALID_REQUEST');
      expect(error.details, password).toMatchObject({ field: 'body.password', reason });
    }
    expect((await client.get('/v1/auth/setup')).body).toEqual({ pending: true });
    expect((await setup(OWNER.password)).status).toBe(201);
  });

  it('refuses a bad password when someone new accepts an invite, and the invite stays usable', async () => {
    t = await startTestApp(engine);
    const owner = await signedInOwner(t);
    const invite = (await owner.post('/v1/invites', { email: 'newcomer@example.com', role: 'editor' })).body;
    const guest = new Client(t);
    for (const [password, reason] of [['          ', 'blank'], ['iloveyou12', 'common'], ['newcomer@example.com', 'is_email']] as const) {
      const error = expectError(await guest.post(`/v1/invites/${invite.token}/accept`, { name: 'Nia', password }), 400, 'INVALID_REQUEST');
      expect(error.details).toMatchObject({ field: 'body.password', reason });
    }
    expect((await guest.post(`/v1/invites/${invite.token}/accept`, { name: 'Nia', password: 'a long and odd phrase' })).status).toBe(200);
  });

  it('changes a password with the current one: other sessions end, this one goes on, audited in every workspace', async () => {
    t = await startTestApp(engine);
    const owner = await signedInOwner(t);
    const second = await owner.post('/v1/workspaces', { name: 'Second' });
    const phone = new Client(t);
    expect((await phone.signIn(OWNER.email, OWNER.password)).status).toBe(200);
    const key = (await owner.post('/v1/keys', { name: 'k', scopes: ['collections:read'] })).body.secret as string;
    // Someone else's sessions are not touched.
    const editor = await addMember(t, owner, 'ed@example.com', 'editor');

    const changed = await owner.post('/v1/auth/password', { currentPassword: OWNER.password, newPassword: 'a brand new passphrase' });
    expect(changed.status).toBe(204);
    expect((await owner.get('/v1/auth/session')).status).toBe(200);
    expectError(await phone.get('/v1/auth/session'), 401, 'UNAUTHENTICATED');
    expect((await editor.get('/v1/auth/session')).status).toBe(200);
    // Keys are not sessions: programs go on.
    expect((await new Client(t).get('/v1/me', { authorization: `Bearer ${key}` })).status).toBe(200);

    const fresh = new Client(t);
    expectError(await fresh.signIn(OWNER.email, OWNER.password), 401, 'UNAUTHENTICATED');
    expect((await fresh.signIn(OWNER.email, 'a brand new passphrase')).status).toBe(200);

    for (const workspaceId of [owner.workspaceId!, second.body.id]) {
      owner.workspaceId = workspaceId;
      const entries = await allAuditEntries(owner, 'action=person.password_changed');
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        actor: { type: 'person', id: owner.personId },
        target: { type: 'person', id: owner.personId },
        requestId: changed.headers['x-request-id'],
        details: { otherSessionsEnded: 1 },
      });
      const everything = JSON.stringify(await allAuditEntries(owner));
      expect(everything).not.toContain('a brand new passphrase');
      expect(everything).not.toContain(OWNER.password);
    }
  });

  it('refuses a wrong current password or a bad new one, changing nothing; wrong ones count against the lock', async () => {
    t = await startTestApp(engine, { signInMaxFailures: 3 });
    const owner = await signedInOwner(t);
    const bad = expectError(await owner.post('/v1/auth/password', { currentPassword: OWNER.password, newPassword: '          ' }), 400, 'INVALID_REQUEST');
    expect(bad.details).toMatchObject({ field: 'body.newPassword', reason: 'blank' });
    expectError(await owner.post('/v1/auth/password', { currentPassword: OWNER.password, newPassword: 'password1234' }), 400, 'INVALID_REQUEST');
    expectError(await owner.post('/v1/auth/password', { currentPassword: OWNER.password, newPassword: OWNER.email }), 400, 'INVALID_REQUEST');
    // Bad new passwords used none of the attempts: three wrong current passwords are still needed to lock.
    for (let i = 0; i < 3; i++) {
      const wrong = expectError(await owner.post('/v1/auth/password', { currentPassword: `guess ${i}`, newPassword: 'a brand new passphrase' }), 400, 'INVALID_REQUEST');
      expect(wrong.details).toMatchObject({ field: 'body.currentPassword' });
    }
    // Locked: not even the right current password is checked now, and signing in is locked too.
    expectError(await owner.post('/v1/auth/password', { currentPassword: OWNER.password, newPassword: 'a brand new passphrase' }), 429, 'RATE_LIMITED');
    expectError(await new Client(t).signIn(OWNER.email, OWNER.password), 429, 'RATE_LIMITED');
    // Nothing changed; the session is still there.
    expect((await owner.get('/v1/auth/session')).status).toBe(200);
    t.clock.advance(t.deps.config.signInLockSeconds * 1000);
    expect((await new Client(t).signIn(OWNER.email, OWNER.password)).status).toBe(200);
  });

  it('needs a signed-in person and JSON: keys and cross-site forms cannot change a password', async () => {
    t = await startTestApp(engine);
    const owner = await signedInOwner(t);
    const key = (await owner.post('/v1/keys', { name: 'k', scopes: ['collections:read'] })).body.secret as string;
    const body = { currentPassword: OWNER.password, newPassword: 'a brand new passphrase' };
    expectError(await new Client(t).post('/v1/auth/password', body, { authorization: `Bearer ${key}` }), 403, 'PERSON_REQUIRED');
    expectError(await new Client(t).post('/v1/auth/password', body), 401, 'UNAUTHENTICATED');
    const form = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/password',
      headers: { cookie: `plainbase_session=${owner.cookie}`, 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      payload: 'currentPassword=x&newPassword=y',
    });
    expect(form.statusCode).toBe(403);
    expectError(await owner.post('/v1/auth/password', { ...body, extra: 1 }), 400, 'INVALID_REQUEST');
    expect((await new Client(t).signIn(OWNER.email, OWNER.password)).status).toBe(200);
  });
});
