import { afterEach, expect, it } from 'vitest';
import { Client, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

describeEachEngine('rate limits', (engine) => {
  let t: TestApp;
  afterEach(async () => { await t.close(); });

  it('limits anonymous public reads per address with 429, retry-after and RateLimit headers', async () => {
    t = await startTestApp(engine, { rateLimitPerIp: 3 });
    const owner = await signedInOwner(t);
    const { body: col } = await owner.post('/v1/collections', { name: 'posts', public: true });
    const { body: rec } = await owner.post('/v1/collections/posts/records', { data: {} });
    const anonymous = new Client(t);
    const url = `/v1/collections/${col.id}/records/${rec.id}`;
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 5; i++) {
      last = await anonymous.get(url);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(last!.body.error.code).toBe('RATE_LIMITED');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(last!.headers['ratelimit-limit']).toBe('3');
    // Signed-in callers are counted separately, and health checks never.
    expect((await owner.get(url)).status).toBe(200);
    expect((await anonymous.get('/healthz')).status).toBe(200);
  });

  it('counts anonymous IPv6 callers by their /64: the addresses of one network share its limit', async () => {
    t = await startTestApp(engine, { rateLimitPerIp: 2 });
    const owner = await signedInOwner(t);
    const { body: col } = await owner.post('/v1/collections', { name: 'posts', public: true });
    const url = `/v1/collections/${col.id}/records`;
    const from = (remoteAddress: string) => Object.assign(new Client(t), { remoteAddress });
    const statuses = [];
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::abcd']) statuses.push((await from(address).get(url)).status);
    expect(statuses).toEqual([200, 200, 429]);
    // The next /64, and an IPv4 caller, are counted on their own.
    expect((await from('2001:db8:1:3::1').get(url)).status).toBe(200);
    expect((await from('192.0.2.7').get(url)).status).toBe(200);
  });

  it('limits a signed-in caller by who they are', async () => {
    t = await startTestApp(engine, { rateLimitPerKey: 2 });
    const owner = await signedInOwner(t);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await owner.get('/v1/collections')).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
