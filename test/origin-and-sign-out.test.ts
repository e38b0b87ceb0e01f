import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import { createOwner } from '../src/modules/setup/first-owner.js';
import { Client, expectError, OWNER, sessionSetCookie, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

describe('the service\'s own origin in the configuration', () => {
  it('is judged by the request\'s Host only in development without PLAINBASE_PUBLIC_URL', () => {
    expect(loadConfig({ PLAINBASE_ENV: 'development' }).originFromHost).toBe(true);
    expect(loadConfig({ PLAINBASE_ENV: 'development', PLAINBASE_PUBLIC_URL: 'http://localhost:8080' }).originFromHost).toBe(false);
    expect(loadConfig({}).originFromHost).toBe(false);
    expect(loadConfig({ PLAINBASE_PUBLIC_URL: 'https://data.example.com' }).originFromHost).toBe(false);
  });
});

describeEachEngine('sign-out and the same-origin rule', (engine) => {
  let t: TestApp;
  afterEach(async () => { await t?.close(); });

  /** The publicUrl of the test config (test/support/harness.ts). */
  const OWN = 'http://plainbase.test';

  it('signs out a cookie-only POST whose Origin is the service\'s own: no body, no workspace header', async () => {
    t = await startTestApp(engine);
    const owner = await signedInOwner(t);
    const cookie = `plainbase_session=${owner.cookie}`;
    const browser = new Client(t);

    // The same request from another site, or with no Origin and nothing else, changes nothing.
    expectError(await browser.call('POST', '/v1/auth/sign-out', undefined, { cookie, origin: 'https://evil.example' }), 403, 'FORBIDDEN');
    const bare = await browser.call('POST', '/v1/auth/sign-out', undefined, { cookie });
    expect(expectError(bare, 403, 'FORBIDDEN').message).toMatch(/JSON or the x-baas-workspace header/);
    expect(sessionSetCookie(bare)).toBeNull();
    expect((await owner.get('/v1/auth/session')).status).toBe(200);

    const signedOut = await browser.call('POST', '/v1/auth/sign-out', undefined, { cookie, origin: OWN });
    expect(signedOut.status).toBe(204);
    expect(sessionSetCookie(signedOut)?.value).toBe('');
    expectError(await owner.get('/v1/auth/session'), 401, 'UNAUTHENTICATED');
  });

  it('holds the rule for every other change a cookie can make: own Origin passes, another site never', async () => {
    t = await startTestApp(engine);
    const owner = await signedInOwner(t);
    const headers = { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId!, 'content-type': 'application/json' };
    const create = (origin: string) =>
      t.app.inject({ method: 'POST', url: '/v1/collections', headers: { ...headers, origin }, payload: { name: `c${origin.length}` } });
    expect((await create(OWN)).statusCode).toBe(201);
    for (const origin of ['https://evil.example', 'null', 'http://plainbase.test.evil.example', 'http://plainbase.test:81']) {
      expect((await create(origin)).statusCode, origin).toBe(403);
    }
  });

  describe('PLAINBASE_PUBLIC_URL unset in development', () => {
    /** What loadConfig gives for PLAINBASE_ENV=development alone. */
    const DEVELOPMENT: Partial<Config> = { env: 'development', originFromHost: true, publicUrl: 'http://127.0.0.1:8080' };

    const signIn = (host: string, origin: string) =>
      t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: { host, origin, 'content-type': 'application/json' }, payload: { email: OWNER.email, password: OWNER.password } });

    it('accepts the dashboard at localhost and at 127.0.0.1 alike, and no other site', async () => {
      t = await startTestApp(engine, DEVELOPMENT);
      await createOwner(t.deps, OWNER);
      expect((await signIn('localhost:8080', 'http://localhost:8080')).statusCode).toBe(200);
      expect((await signIn('127.0.0.1:8080', 'http://127.0.0.1:8080')).statusCode).toBe(200);
      expect((await signIn('[::1]:8080', 'http://[::1]:8080')).statusCode).toBe(200);
      expect((await signIn('LOCALHOST:8080', 'http://localhost:8080')).statusCode).toBe(200);
      // Another site, or the service under another port or scheme than the request was sent to.
      for (const [host, origin] of [
        ['localhost:8080', 'http://evil.example'],
        ['localhost:8080', 'http://localhost:9999'],
        ['localhost:8080', 'https://localhost:8080'],
        ['localhost:8080', 'null'],
      ] as const) {
        const reply = await signIn(host, origin);
        expect(reply.statusCode, `${host} ${origin}`).toBe(403);
        expect(reply.json().error.message).toMatch(/another site/);
      }
    });

    it('signs out from localhost with only the cookie', async () => {
      t = await startTestApp(engine, DEVELOPMENT);
      await createOwner(t.deps, OWNER);
      const signedIn = await signIn('localhost:8080', 'http://localhost:8080');
      const cookie = signedIn.cookies.find((entry) => entry.name === 'plainbase_session')!.value;
      const out = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-out', headers: { host: 'localhost:8080', origin: 'http://localhost:8080', cookie: `plainbase_session=${cookie}` } });
      expect(out.statusCode).toBe(204);
      const session = await t.app.inject({ method: 'GET', url: '/v1/auth/session', headers: { cookie: `plainbase_session=${cookie}` } });
      expect(session.statusCode).toBe(401);
    });

    it('with PLAINBASE_PUBLIC_URL set, only that origin is the service\'s own', async () => {
      t = await startTestApp(engine, { env: 'development', originFromHost: false, publicUrl: 'https://data.example.com' });
      await createOwner(t.deps, OWNER);
      expect((await signIn('localhost:8080', 'http://localhost:8080')).statusCode).toBe(403);
      expect((await signIn('127.0.0.1:8080', 'http://127.0.0.1:8080')).statusCode).toBe(403);
      expect((await signIn('data.example.com', 'https://data.example.com')).statusCode).toBe(200);
    });
  });
});
