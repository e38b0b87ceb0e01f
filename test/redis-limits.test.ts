import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../src/app.js';
import type { Config } from '../src/config.js';
import type { App } from '../src/http/app-type.js';
import { Client, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { startTestRedis, type TestRedis } from './support/redis-server.js';

/**
 * PLAINBASE_REDIS_URL: the request limits and the failed-authentication limit are counted in
 * Redis, so they hold across processes. "Two processes" here are two apps built on the same
 * database in this test process, each with its own Redis connection and its own limiter state:
 * for the counters that is exactly what two processes are (they share nothing but Redis and the
 * database), and it lets the test alternate requests precisely. The Redis server is the test's
 * own, so stopping and pausing it disturbs no other test.
 */
let redis: TestRedis;
// Without redis-server the file is skipped locally, said so at the start of the run (tools-present.ts).
const present = inject('redisServerPresent');
beforeAll(async () => {
  if (present) redis = await startTestRedis();
}, 30_000);
afterAll(async () => {
  await redis?.stop();
});

describe.skipIf(!present)('with redis-server', () => {
  describeEachEngine('limits counted in Redis', (engine) => {
    let a: TestApp;
    let b: App | undefined;
    afterEach(async () => {
      redis.resume();
      await b?.close();
      b = undefined;
      await a.close();
      await redis.flush();
    });

    /** App A (the harness's) and a second app B on the same database. */
    async function twoProcesses(overrides: Partial<Config>): Promise<[TestApp, TestApp]> {
      a = await startTestApp(engine, { redisUrl: redis.url, ...overrides });
      b = await buildApp({ ...a.deps, logger: false });
      await b.ready();
      return [a, { ...a, app: b }];
    }

    async function keyFor(t: TestApp): Promise<{ authorization: string }> {
      const owner = await signedInOwner(t);
      const { body } = await owner.post('/v1/keys', { name: 'limited', scopes: ['collections:read'] });
      return { authorization: `Bearer ${body.secret}` };
    }

    it('a key gets its per-second budget once across both processes, not once per process', async () => {
      const [pa, pb] = await twoProcesses({ rateLimitPerKey: 4 });
      const key = await keyFor(pa);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await new Client(i % 2 ? pb : pa).call('GET', '/v1/collections', undefined, key)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    });

    it('an address reading anonymously gets its budget once across both processes', async () => {
      const [pa, pb] = await twoProcesses({ rateLimitPerIp: 3 });
      const owner = await signedInOwner(pa);
      const { body: col } = await owner.post('/v1/collections', { name: 'posts', public: true });
      const { body: rec } = await owner.post('/v1/collections/posts/records', { data: {} });
      const url = `/v1/collections/${col.id}/records/${rec.id}`;
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await new Client(i % 2 ? pb : pa).get(url)).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
    });

    it('refused credentials are counted across both processes', async () => {
      const [pa, pb] = await twoProcesses({ authFailuresPerIp: 3 });
      const bad = { authorization: 'Bearer pb_live_notarealkeynotarealkeynotarealkey' };
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await new Client(i % 2 ? pb : pa).call('GET', '/v1/collections', undefined, bad)).status);
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    });

    it('Redis going away: requests are served uncounted, refused credentials get 429, and counting resumes when it is back', async () => {
      const [pa] = await twoProcesses({ rateLimitPerKey: 2, authFailuresPerIp: 100 });
      const key = await keyFor(pa);
      const client = new Client(pa);
      const get = async (headers: Record<string, string>) => (await client.call('GET', '/v1/collections', undefined, headers)).status;
      const bad = { authorization: 'Bearer pb_live_notarealkeynotarealkeynotarealkey' };
      expect([await get(key), await get(key), await get(key)]).toEqual([200, 200, 429]);

      await redis.stop();
      // Fail open: the limit is not counted, so more than the budget is served.
      expect([await get(key), await get(key), await get(key)]).toEqual([200, 200, 200]);
      // Fail closed: a refused credential is answered 429 (back off), not let through to guess on uncounted.
      const refused = await client.call('GET', '/v1/collections', undefined, bad);
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      // A request with no credential guesses nothing: still 401.
      expect((await new Client(pa).get('/v1/collections')).status).toBe(401);

      await redis.restart();
      await expect.poll(() => get(bad), { timeout: 10_000, interval: 100 }).toBe(401);
      await new Promise((resolve) => setTimeout(resolve, 1100)); // a fresh one-second window
      expect([await get(key), await get(key), await get(key)]).toEqual([200, 200, 429]);
    });

    it('a Redis that hangs costs a request a bounded wait, never the request', async () => {
      const [pa] = await twoProcesses({ rateLimitPerKey: 100 });
      const key = await keyFor(pa);
      redis.pause();
      const started = Date.now();
      const reply = await new Client(pa).call('GET', '/v1/collections', undefined, key);
      expect(reply.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(2000);
    });
  });
});
