import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOwner } from '../src/modules/setup/first-owner.js';
import { failureDelayMs } from '../src/modules/sessions/sign-in.js';
import { allAuditEntries, Client, expectError, OWNER, sessionSetCookie, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

describe('failureDelayMs', () => {
  it('adds nothing for the first failure, then one step per failure in a row', () => {
    expect(failureDelayMs(0, 250)).toBe(0);
    expect(failureDelayMs(1, 250)).toBe(0);
    expect(failureDelayMs(2, 250)).toBe(250);
    expect(failureDelayMs(5, 250)).toBe(1000);
  });

  it('is capped at 2 s and is zero when slowing down is switched off', () => {
    expect(failureDelayMs(9, 250)).toBe(2000);
    expect(failureDelayMs(1000, 250)).toBe(2000);
    expect(failureDelayMs(50, 0)).toBe(0);
  });
});

describeEachEngine('auth', (engine) => {
  let t: TestApp;
  // Three failures (and six per address) instead of the defaults keep the lock tests quick (each failure is a scrypt).
  beforeEach(async () => { t = await startTestApp(engine, { signInMaxFailures: 3, signInMaxFailuresPerAddress: 6 }); });
  afterEach(async () => { await t?.close(); });

  it('signs in with the right password: session body, a hardened cookie, the session route, sign-out', async () => {
    const { person, workspace } = await createOwner(t.deps, OWNER);
    const client = new Client(t);
    // Emails compare without case.
    const signIn = await client.post('/v1/auth/sign-in', { email: OWNER.email.toUpperCase(), password: OWNER.password });

    expect(signIn.status).toBe(200);
    expect(signIn.body).toEqual({
      person: { id: person.id, email: OWNER.email, name: OWNER.name },
      expiresAt: new Date(t.clock.now().getTime() + t.deps.config.sessionTtlSeconds * 1000).toISOString(),
      workspaces: [{ id: workspace.id, name: 'default', role: 'owner', createdAt: workspace.createdAt }],
    });
    const cookie = sessionSetCookie(signIn);
    expect(cookie).not.toBeNull();
    expect(cookie!.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie!.attributes.has('httponly')).toBe(true);
    expect(cookie!.attributes.get('samesite')).toBe('Lax');
    expect(cookie!.attributes.has('secure')).toBe(true);
    expect(cookie!.attributes.get('path')).toBe('/');
    expect(Math.abs(Date.parse(cookie!.attributes.get('expires')!) - Date.parse(signIn.body.expiresAt))).toBeLessThan(1000);

    const session = await client.get('/v1/auth/session');
    expect(session.status).toBe(200);
    expect(session.body).toEqual(signIn.body);

    const token = client.cookie;
    const signOut = await client.post('/v1/auth/sign-out');
    expect(signOut.status).toBe(204);
    const cleared = sessionSetCookie(signOut);
    expect(cleared?.value).toBe('');
    expect(Date.parse(cleared!.attributes.get('expires')!)).toBeLessThanOrEqual(t.clock.now().getTime());

    // The old cookie is dead on the server, not only forgotten by the browser.
    client.cookie = token;
    expectError(await client.get('/v1/auth/session'), 401, 'UNAUTHENTICATED');
    expectError(await client.get('/v1/members'), 401, 'UNAUTHENTICATED');
    expectError(await client.post('/v1/auth/sign-out'), 401, 'UNAUTHENTICATED');
  });

  it('gives a wrong email and a wrong password the very same answer', async () => {
    await createOwner(t.deps, OWNER);
    const client = new Client(t);
    const wrongEmail = await client.post('/v1/auth/sign-in', { email: 'nobody@example.com', password: OWNER.password });
    const wrongPassword = await client.post('/v1/auth/sign-in', { email: OWNER.email, password: 'not the password' });

    const a = expectError(wrongEmail, 401, 'UNAUTHENTICATED');
    const b = expectError(wrongPassword, 401, 'UNAUTHENTICATED');
    expect(a.message).toBe(b.message);
    expect(a.details).toBeUndefined();
    expect(b.details).toBeUndefined();
    expect(Object.keys(wrongEmail.headers).sort()).toEqual(Object.keys(wrongPassword.headers).sort());
    expect(sessionSetCookie(wrongEmail)).toBeNull();
    expect(sessionSetCookie(wrongPassword)).toBeNull();
  });

  it('does not mark the cookie Secure in development', async () => {
    const dev = await startTestApp(engine, { env: 'development' });
    try {
      await createOwner(dev.deps, OWNER);
      const reply = await new Client(dev).post('/v1/auth/sign-in', { email: OWNER.email, password: OWNER.password });
      expect(reply.status).toBe(200);
      const cookie = sessionSetCookie(reply)!;
      expect(cookie.attributes.has('secure')).toBe(false);
      expect(cookie.attributes.has('httponly')).toBe(true);
      expect(cookie.attributes.get('samesite')).toBe('Lax');
    } finally {
      await dev.close();
    }
  });

  it('ends a session when its time is up', async () => {
    const owner = await signedInOwner(t);
    const ttlMs = t.deps.config.sessionTtlSeconds * 1000;

    // Used within the idle limit all along (PLAINBASE_SESSION_IDLE_MINUTES, auth-sessions.test.ts),
    // it still ends when its whole time is up.
    const stepMs = t.deps.config.sessionIdleSeconds * 1000 - 60_000;
    for (let left = ttlMs - 1000; left > 0; left -= stepMs) {
      t.clock.advance(Math.min(stepMs, left));
      expect((await owner.get('/v1/auth/session')).status).toBe(200);
    }
    expect((await owner.get('/v1/members')).status).toBe(200);

    t.clock.advance(1000);
    expectError(await owner.get('/v1/auth/session'), 401, 'UNAUTHENTICATED');
    expectError(await owner.get('/v1/members'), 401, 'UNAUTHENTICATED');
    expectError(await owner.get('/v1/workspaces'), 401, 'UNAUTHENTICATED');
  });

  it('locks an email after too many failures, even for the right password and from another address', async () => {
    await createOwner(t.deps, OWNER);
    const { signInMaxFailures, signInLockSeconds } = t.deps.config;
    const attacker = new Client(t);
    attacker.remoteAddress = '203.0.113.7';
    for (let i = 0; i < signInMaxFailures; i++) {
      expectError(await attacker.post('/v1/auth/sign-in', { email: OWNER.email, password: `guess ${i}` }), 401, 'UNAUTHENTICATED');
    }

    const owner = new Client(t);
    owner.remoteAddress = '198.51.100.20';
    const locked = await owner.post('/v1/auth/sign-in', { email: OWNER.email, password: OWNER.password });
    expectError(locked, 429, 'RATE_LIMITED');
    expect(Number(locked.headers['retry-after'])).toBe(signInLockSeconds);
    expect(sessionSetCookie(locked)).toBeNull();
    expect(owner.cookie).toBeNull();

    t.clock.advance((signInLockSeconds - 1) * 1000);
    const stillLocked = await owner.post('/v1/auth/sign-in', { email: OWNER.email, password: OWNER.password });
    expectError(stillLocked, 429, 'RATE_LIMITED');
    expect(Number(stillLocked.headers['retry-after'])).toBe(1);

    t.clock.advance(1000);
    expect((await owner.post('/v1/auth/sign-in', { email: OWNER.email, password: OWNER.password })).status).toBe(200);
    expect((await owner.get('/v1/auth/session')).status).toBe(200);
  });

  it('does not lock before the limit, and a success starts the email count again', async () => {
    await createOwner(t.deps, OWNER);
    const { signInMaxFailures } = t.deps.config;
    const client = new Client(t);
    let address = 0;
    const attempt = (password: string) => {
      // A fresh address each time, so only the email's count is at stake.
      client.remoteAddress = `192.0.2.${++address}`;
      return client.post('/v1/auth/sign-in', { email: OWNER.email, password });
    };
    for (let i = 0; i < signInMaxFailures - 1; i++) expect((await attempt('wrong password')).status).toBe(401);
    expect((await attempt(OWNER.password)).status).toBe(200);
    for (let i = 0; i < signInMaxFailures - 1; i++) expect((await attempt('wrong password')).status).toBe(401);
    expect((await attempt(OWNER.password)).status).toBe(200);
  });

  it('locks an address that fails for many different emails, at its own, higher, count', async () => {
    await createOwner(t.deps, OWNER);
    const { signInMaxFailures, signInMaxFailuresPerAddress, signInLockSeconds } = t.deps.config;
    expect(signInMaxFailuresPerAddress).toBeGreaterThan(signInMaxFailures);
    const sprayer = new Client(t);
    sprayer.remoteAddress = '203.0.113.99';
    for (let i = 0; i < signInMaxFailuresPerAddress; i++) {
      expectError(await sprayer.post('/v1/auth/sign-in', { email: `person${i}@example.com`, password: 'password123' }), 401, 'UNAUTHENTICATED');
    }
    const fromSameAddress = await sprayer.post('/v1/auth/sign-in', { email: OWNER.email, password: OWNER.password });
    const error = expectError(fromSameAddress, 429, 'RATE_LIMITED');
    expect(error.message).toMatch(/network address/);
    expect(Number(fromSameAddress.headers['retry-after'])).toBe(signInLockSeconds);

    const elsewhere = new Client(t);
    elsewhere.remoteAddress = '203.0.113.100';
    expect((await elsewhere.post('/v1/auth/sign-in', { email: OWNER.email, password: OWNER.password })).status).toBe(200);

    t.clock.advance(signInLockSeconds * 1000 + 1);
    expect((await sprayer.post('/v1/auth/sign-in', { email: OWNER.email, password: OWNER.password })).status).toBe(200);
  });

  it("does not lock out a colleague behind the same address when one person's account is locked", async () => {
    await createOwner(t.deps, OWNER);
    const colleague = { email: 'colleague@example.com', password: 'colleague password' };
    await createOwner(t.deps, colleague);
    const office = new Client(t);
    office.remoteAddress = '198.51.100.40';
    for (let i = 0; i < t.deps.config.signInMaxFailures; i++) {
      expectError(await office.post('/v1/auth/sign-in', { email: OWNER.email, password: `typo ${i}` }), 401, 'UNAUTHENTICATED');
    }
    const locked = expectError(await office.post('/v1/auth/sign-in', { email: OWNER.email, password: OWNER.password }), 429, 'RATE_LIMITED');
    expect(locked.message).toMatch(/account/);
    const other = new Client(t);
    other.remoteAddress = '198.51.100.40';
    expect((await other.post('/v1/auth/sign-in', colleague)).status).toBe(200);
  });

  it('counts password guesses through an invite link against the same lock', async () => {
    const owner = await signedInOwner(t);
    const bob = { email: 'bob@example.com', password: 'bobs own password' };
    await createOwner(t.deps, bob);
    const { signInMaxFailures, signInLockSeconds } = t.deps.config;
    const invite = await owner.post('/v1/invites', { email: bob.email, role: 'viewer' });
    const holder = new Client(t);
    holder.remoteAddress = '203.0.113.50';
    for (let i = 0; i < signInMaxFailures; i++) {
      expectError(await holder.post(`/v1/invites/${invite.body.token}/accept`, { password: `guess ${i}` }), 401, 'UNAUTHENTICATED');
    }
    const locked = await holder.post(`/v1/invites/${invite.body.token}/accept`, { password: bob.password });
    expectError(locked, 429, 'RATE_LIMITED');
    expect(Number(locked.headers['retry-after'])).toBe(signInLockSeconds);
    const bobElsewhere = new Client(t);
    bobElsewhere.remoteAddress = '198.51.100.77';
    expectError(await bobElsewhere.post('/v1/auth/sign-in', bob), 429, 'RATE_LIMITED');

    t.clock.advance(signInLockSeconds * 1000);
    expect((await bobElsewhere.post(`/v1/invites/${invite.body.token}/accept`, { password: bob.password })).status).toBe(200);
  });

  it('writes auth.signed_in and auth.sign_in_failed into each workspace of the person, and nowhere else', async () => {
    const owner = await signedInOwner(t);
    const second = await owner.post('/v1/workspaces', { name: 'Second' });
    expect(second.status).toBe(201);

    const browser = new Client(t);
    browser.remoteAddress = '198.51.100.5';
    const headers = { 'user-agent': 'AuditTest/1.0' };
    const failed = await browser.post('/v1/auth/sign-in', { email: OWNER.email, password: 'a wrong password' }, headers);
    expect(failed.status).toBe(401);
    const unknown = await browser.post('/v1/auth/sign-in', { email: 'stranger@example.com', password: 'a wrong password' }, headers);
    expect(unknown.status).toBe(401);
    const ok = await browser.post('/v1/auth/sign-in', { email: OWNER.email, password: OWNER.password }, headers);
    expect(ok.status).toBe(200);

    for (const workspaceId of [owner.workspaceId!, second.body.id]) {
      owner.workspaceId = workspaceId;
      const entries = await allAuditEntries(owner, 'action=auth.*');
      const signedIn = entries.find((e) => e.action === 'auth.signed_in' && e.requestId === ok.headers['x-request-id']);
      expect(signedIn).toMatchObject({
        actor: { type: 'person', id: owner.personId, name: OWNER.name },
        target: { type: 'person', id: owner.personId },
        ip: '198.51.100.5',
        userAgent: 'AuditTest/1.0',
      });
      const failures = entries.filter((e) => e.action === 'auth.sign_in_failed');
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({
        actor: { type: 'person', id: owner.personId },
        ip: '198.51.100.5',
        requestId: failed.headers['x-request-id'],
        details: { email: OWNER.email },
      });
      // The unknown email's failure belongs to no workspace, and no password is kept.
      expect(JSON.stringify(entries)).not.toContain('stranger@example.com');
      expect(JSON.stringify(entries)).not.toContain('a wrong password');
      expect(JSON.stringify(entries)).not.toContain(OWNER.password);
    }
  });
});
