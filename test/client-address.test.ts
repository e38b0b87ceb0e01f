import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressKey } from '../src/client-address.js';
import { newId } from '../src/ids.js';
import { issueToken } from '../src/modules/keys/token.js';
import { createOwner } from '../src/modules/setup/first-owner.js';
import { OWNER, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const hexGroup = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
const ipv6Groups = fc.array(hexGroup, { minLength: 8, maxLength: 8 });

describe('addressKey: what a per-address limit counts by', () => {
  it('keeps an IPv4 address, and reads an IPv4-mapped IPv6 address as that IPv4 address', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::FFFF:cb00:7107')).toBe('203.0.113.7');
  });

  it('reduces an IPv6 address to its /64, however it is spelled', () => {
    expect(addressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });

  it('leaves text that is no address as it is', () => {
    for (const text of ['unknown', '', 'not:an:address', '2001:db8::/64']) expect(addressKey(text)).toBe(text);
  });

  it('gives two IPv6 addresses one key exactly when their first 64 bits agree', () => {
    fc.assert(
      fc.property(ipv6Groups, ipv6Groups, fc.boolean(), (a, b, sharePrefix) => {
        const other = sharePrefix ? [...a.slice(0, 4), ...b.slice(4)] : b;
        const same = a.slice(0, 4).every((group, i) => parseInt(group, 16) === parseInt(other[i]!, 16));
        expect(addressKey(a.join(':')) === addressKey(other.join(':'))).toBe(same);
        // Interface bits never show in the key.
        expect(addressKey(a.join(':'))).toMatch(/^[0-9a-f]{1,4}(:[0-9a-f]{1,4}){3}::\/64$/);
      }),
    );
  });
});

/**
 * End to end behind a trusted proxy (every request comes from loopback with X-Forwarded-For):
 * three clients of one /64 share each per-address budget; a client of the next /64 has its own.
 */
describeEachEngine('an IPv6 /64 is one client to every per-address limit', (engine) => {
  let t: TestApp;
  let publicCollection: string;
  const SAME_64 = ['2001:db8:aa:1::1', '2001:db8:aa:1:ffff:ffff:ffff:fffe', '2001:db8:aa:1:1234::9'];
  const NEXT_64 = '2001:db8:aa:2::1';

  beforeAll(async () => {
    t = await startTestApp(engine, { trustProxy: true, signInMaxFailuresPerAddress: 3, authFailuresPerIp: 3, rateLimitPerIp: 3 });
    const owner = await signedInOwner(t);
    publicCollection = (await owner.post('/v1/collections', { name: 'posts', public: true })).body.id;
    await createOwner(t.deps, { email: 'neighbour@example.com', password: 'neighbour password 1' });
  });
  afterAll(() => t?.close());

  const call = async (client: string, method: 'GET' | 'POST', url: string, init: { body?: unknown; authorization?: string } = {}) => {
    const response = await t.app.inject({
      method,
      url,
      headers: {
        'x-forwarded-for': client,
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.authorization ? { authorization: init.authorization } : {}),
      },
      payload: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return response.statusCode;
  };

  it('sign-in failures per address', async () => {
    for (const [i, client] of SAME_64.entries()) {
      expect(await call(client, 'POST', '/v1/auth/sign-in', { body: { email: `stranger${i}@example.com`, password: 'not the password' } })).toBe(401);
    }
    // A fourth address of the same /64, with the right password: the /64 is locked.
    expect(await call('2001:db8:aa:1::77', 'POST', '/v1/auth/sign-in', { body: { email: OWNER.email, password: OWNER.password } })).toBe(429);
    expect(await call('::ffff:192.0.2.1', 'POST', '/v1/auth/sign-in', { body: { email: 'neighbour@example.com', password: 'neighbour password 1' } })).toBe(200);
    expect(await call(NEXT_64, 'POST', '/v1/auth/sign-in', { body: { email: 'neighbour@example.com', password: 'neighbour password 1' } })).toBe(200);
    const audited = await t.deps.db.selectFrom('audit_log').select('ip').where('action', '=', 'auth.sign_in_failed').orderBy('id').execute();
    // The audit log keeps each full address: only the limits count by the prefix.
    expect(audited.map((row) => row.ip)).toEqual(SAME_64);
  });

  it('refused credentials per address', async () => {
    const badKey = `Bearer ${issueToken('live', newId('key'))}`;
    for (const client of SAME_64) expect(await call(client, 'GET', '/v1/collections', { authorization: badKey })).toBe(401);
    expect(await call('2001:db8:aa:1::78', 'GET', '/v1/collections', { authorization: badKey })).toBe(429);
    expect(await call(NEXT_64, 'GET', '/v1/collections', { authorization: badKey })).toBe(401);
  });

  it('anonymous requests per second', async () => {
    const url = `/v1/collections/${publicCollection}/records`;
    const statuses = [];
    for (const client of [...SAME_64, '2001:db8:aa:1::79']) statuses.push(await call(client, 'GET', url));
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(await call(NEXT_64, 'GET', url)).toBe(200);
  });
});
