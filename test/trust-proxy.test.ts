import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import type { Config } from '../src/config.js';
import { createOwner } from '../src/modules/setup/first-owner.js';
import { issueToken } from '../src/modules/keys/token.js';
import { newId } from '../src/ids.js';
import { OWNER, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * Client addresses with and without PLAINBASE_TRUST_PROXY, over a real listening server: every
 * request really comes from 127.0.0.1, playing either a client that forges X-Forwarded-For or a
 * proxy on loopback that passes on the addresses of two clients, A and B. Each per-address limit
 * (sign-in failures, refused credentials, anonymous request rate) and the audit log must use the
 * address the setting gives: the socket's when unset, the client's behind a trusted proxy.
 */
const CLIENT_A = '203.0.113.10';
const CLIENT_B = '198.51.100.20';
const LIMITS: Partial<Config> = { signInMaxFailuresPerAddress: 3, authFailuresPerIp: 3, rateLimitPerIp: 2 };

describeEachEngine('client addresses and PLAINBASE_TRUST_PROXY', (engine) => {
  let t: TestApp;
  let base: string;
  afterEach(async () => { await t?.close(); });

  async function start(trustProxy: Config['trustProxy']): Promise<{ publicCollection: string }> {
    t = await startTestApp(engine, { ...LIMITS, trustProxy });
    const owner = await signedInOwner(t);
    const collection = (await owner.post('/v1/collections', { name: 'posts', public: true })).body.id as string;
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    return { publicCollection: collection };
  }

  const call = async (path: string, init: { forwardedFor?: string; method?: string; body?: unknown; authorization?: string } = {}) => {
    const headers: Record<string, string> = {};
    if (init.forwardedFor) headers['x-forwarded-for'] = init.forwardedFor;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (init.authorization) headers.authorization = init.authorization;
    const response = await fetch(`${base}${path}`, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
    await response.arrayBuffer();
    return response.status;
  };
  const wrongSignIn = (email: string, forwardedFor?: string) => call('/v1/auth/sign-in', { method: 'POST', body: { email, password: 'not the password' }, forwardedFor });
  const badKey = (forwardedFor?: string) => call('/v1/collections', { authorization: `Bearer ${issueToken('live', newId('key'))}`, forwardedFor });
  const auditedAddresses = async () =>
    (await t.deps.db.selectFrom('audit_log').select('ip').where('action', '=', 'auth.sign_in_failed').orderBy('id').execute()).map((row) => row.ip);

  it('unset: a forged X-Forwarded-For changes nothing, every limit counts the connection', async () => {
    const { publicCollection } = await start(false);
    // Three failures for three accounts, each claiming another address: one address's budget.
    for (let i = 0; i < 3; i++) expect(await wrongSignIn(`person${i}@example.com`, `192.0.2.${i + 1}`)).toBe(401);
    expect(await call('/v1/auth/sign-in', { method: 'POST', body: { email: OWNER.email, password: OWNER.password }, forwardedFor: '192.0.2.99' })).toBe(429);
    expect(await auditedAddresses()).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);

    for (let i = 0; i < 3; i++) expect(await badKey(`192.0.2.${i + 10}`)).toBe(401);
    expect(await badKey('192.0.2.50')).toBe(429);

    const reads = [];
    for (let i = 0; i < 3; i++) reads.push(await call(`/v1/collections/${publicCollection}/records`, { forwardedFor: `192.0.2.${i + 60}` }));
    expect(reads).toEqual([200, 200, 429]);
  });

  it('behind a trusted proxy: each client has its own count, and the audit log names the client', async () => {
    const { publicCollection } = await start({ addresses: ['127.0.0.1'] });
    await createOwner(t.deps, { email: 'colleague@example.com', password: 'colleague password 1' });
    for (let i = 0; i < 3; i++) expect(await wrongSignIn(`person${i}@example.com`, CLIENT_A)).toBe(401);
    expect(await call('/v1/auth/sign-in', { method: 'POST', body: { email: OWNER.email, password: OWNER.password }, forwardedFor: CLIENT_A })).toBe(429);
    // B comes through the same proxy: its own address, its own budget.
    expect(await call('/v1/auth/sign-in', { method: 'POST', body: { email: 'colleague@example.com', password: 'colleague password 1' }, forwardedFor: CLIENT_B })).toBe(200);
    // A client that sends its own X-Forwarded-For through the proxy: the proxy appends the real
    // address, and only the entries the trusted proxy added are believed.
    expect(await wrongSignIn('someone@example.com', `${CLIENT_B}, ${CLIENT_A}`)).toBe(429);
    expect(await auditedAddresses()).toEqual([CLIENT_A, CLIENT_A, CLIENT_A]);

    for (let i = 0; i < 3; i++) expect(await badKey(CLIENT_A)).toBe(401);
    expect(await badKey(CLIENT_A)).toBe(429);
    expect(await badKey(CLIENT_B)).toBe(401);

    const url = `/v1/collections/${publicCollection}/records`;
    expect([await call(url, { forwardedFor: CLIENT_A }), await call(url, { forwardedFor: CLIENT_A }), await call(url, { forwardedFor: CLIENT_A })]).toEqual([200, 200, 429]);
    expect(await call(url, { forwardedFor: CLIENT_B })).toBe(200);
  });

  it('a count of proxies believes that many entries from the right; true believes the client\'s own first entry', async () => {
    await start({ hops: 1 });
    expect(await wrongSignIn('a@example.com', `192.0.2.1, ${CLIENT_A}`)).toBe(401);
    expect(await wrongSignIn('b@example.com', CLIENT_B)).toBe(401);
    expect(await auditedAddresses()).toEqual([CLIENT_A, CLIENT_B]);
    await t.close();

    await start(true);
    expect(await wrongSignIn('a@example.com', `192.0.2.1, ${CLIENT_A}`)).toBe(401);
    expect(await auditedAddresses()).toEqual(['192.0.2.1']);
  });
});
