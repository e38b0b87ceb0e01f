import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergedVary } from '../src/http/cache-headers.js';
import { Client, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { nginxAvailable, startCachingProxy, type CachingProxy } from './support/nginx-cache.js';

/**
 * What caches may keep (docs/security.md, Caching), proved through a real caching proxy (nginx):
 * two workspaces' public collections of the same name are never served each other's answers, and
 * an answer to a request with a credential is never served to anyone else. The same checks
 * through a location that ignores Vary show the proxy really caches, and what Vary prevents.
 */

const MAX_AGE = 60;

describeEachEngine('what caches may keep', (engine) => {
  const available = nginxAvailable();
  let t: TestApp;
  let proxy: CachingProxy;
  let owner: Client;
  let first: { workspaceId: string; key: string };
  let second: { workspaceId: string; key: string };

  beforeAll(async () => {
    t = await startTestApp(engine, { publicMaxAgeSeconds: MAX_AGE });
    if (available) {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      proxy = await startCachingProxy((t.app.server.address() as AddressInfo).port);
    }
    owner = await signedInOwner(t);
    const secondWorkspace = (await owner.post('/v1/workspaces', { name: 'Second' })).body.id as string;
    // The same names in both workspaces: a public "leads" with different records, a private "secrets".
    const fill = async (workspaceId: string, label: string) => {
      const client = new Client(t);
      client.cookie = owner.cookie;
      client.workspaceId = workspaceId;
      expect((await client.post('/v1/collections', { name: 'leads', public: true })).status).toBe(201);
      expect((await client.post('/v1/collections', { name: 'secrets' })).status).toBe(201);
      expect((await client.post('/v1/collections/leads/records', { data: { from: label } })).status).toBe(201);
      expect((await client.post('/v1/collections/secrets/records', { data: { secret: `${label} secret` } })).status).toBe(201);
      const key = await client.post('/v1/keys', { name: `${label} reader`, scopes: ['records:read', 'collections:read'] });
      expect(key.status).toBe(201);
      return { workspaceId, key: key.body.secret as string };
    };
    first = await fill(owner.workspaceId!, 'first');
    second = await fill(secondWorkspace, 'second');
  }, 30_000);

  afterAll(async () => {
    await proxy?.stop();
    await t?.close();
  });

  const through = async (url: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${proxy.url}${url}`, { headers });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, cache: response.headers.get('x-cache') };
  };
  const anonymous = (workspaceId: string) => ({ 'x-baas-workspace': workspaceId });
  /** Whose records a page holds (the `from` of each). */
  const froms = (text: string) => (JSON.parse(text) as { data: { data: { from: string } }[] }).data.map((record) => record.data.from);

  it.skipIf(!available)("two workspaces' public collections of one name are never served each other's answers", async () => {
    const url = '/v1/collections/leads/records';
    const a1 = await through(url, anonymous(first.workspaceId));
    expect(a1.status).toBe(200);
    expect(froms(a1.text)).toEqual(['first']);
    expect(a1.headers.get('cache-control')).toBe(`public, max-age=${MAX_AGE}`);
    expect(a1.headers.get('vary')).toBe('x-baas-workspace, Authorization, Cookie, Origin');
    // The proxy keeps it: the same request is answered from the cache.
    expect((await through(url, anonymous(first.workspaceId))).cache).toBe('HIT');

    const b1 = await through(url, anonymous(second.workspaceId));
    expect(b1.status).toBe(200);
    expect(froms(b1.text)).toEqual(['second']);
    expect(b1.cache).not.toBe('HIT');
    // Each kept apart, and each served its own from then on.
    const again = await through(url, anonymous(first.workspaceId));
    expect(froms(again.text)).toEqual(['first']);
    expect(froms((await through(url, anonymous(second.workspaceId))).text)).toEqual(['second']);
    // A single record, by id, is kept per workspace header too.
    const id = JSON.parse(a1.text).data[0].id as string;
    const one = await through(`${url}/${id}`, anonymous(first.workspaceId));
    expect(one.status).toBe(200);
    expect((await through(`${url}/${id}`, anonymous(second.workspaceId))).status).toBe(404);

    // Without Vary, the same proxy serves the first workspace's answer to the second: what Vary prevents.
    expect(froms((await through(`/ignoring-vary${url}`, anonymous(first.workspaceId))).text)).toEqual(['first']);
    const leaked = await through(`/ignoring-vary${url}`, anonymous(second.workspaceId));
    expect(leaked.cache).toBe('HIT');
    expect(froms(leaked.text)).toEqual(['first']);
  });

  it.skipIf(!available)('an answer to a key or a session is never served from the cache to anyone', async () => {
    for (const prefix of ['', '/ignoring-vary']) {
      // A key reads its private collection: the answer is the key's alone.
      const secrets = `${prefix}/v1/collections/secrets/records`;
      const withKey = await through(secrets, { authorization: `Bearer ${first.key}`, ...anonymous(first.workspaceId) });
      expect(withKey.status).toBe(200);
      expect(withKey.text).toContain('first secret');
      expect(withKey.headers.get('cache-control')).toBe('private, no-store');
      // The same address, anonymously with the same workspace header, and with the other workspace's key.
      const stranger = await through(secrets, anonymous(first.workspaceId));
      expect(stranger.status).toBe(401);
      expect(stranger.text).not.toContain('first secret');
      expect(stranger.headers.get('cache-control')).toBe('no-store');
      const otherKey = await through(secrets, { authorization: `Bearer ${second.key}`, ...anonymous(first.workspaceId) });
      expect(otherKey.text).toContain('second secret');
      expect(otherKey.text).not.toContain('first secret');
      expect([withKey.cache, stranger.cache, otherKey.cache]).not.toContain('HIT');

      // The trash of a public collection, read with a session, then anonymously: 401, not the owner's page.
      const trash = `${prefix}/v1/collections/leads/records?trashed=true`;
      const session = { cookie: `plainbase_session=${owner.cookie}`, ...anonymous(first.workspaceId) };
      const owners = await through(trash, session);
      expect(owners.status).toBe(200);
      expect(owners.headers.get('cache-control')).toBe('private, no-store');
      const anon = await through(trash, anonymous(first.workspaceId));
      expect(anon.status).toBe(401);
      expect(anon.cache).not.toBe('HIT');

      // A public read asked with a key first: the anonymous reader after it gets its own answer, not the key's.
      const leads = `${prefix}/v1/collections/leads/records?limit=7`;
      expect((await through(leads, { authorization: `Bearer ${first.key}`, ...anonymous(first.workspaceId) })).headers.get('cache-control')).toBe('private, no-store');
      const after = await through(leads, anonymous(first.workspaceId));
      expect(after.cache).not.toBe('HIT');
      expect(after.headers.get('cache-control')).toBe(`public, max-age=${MAX_AGE}`);
    }
  });

  const ask = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

  it('a credential makes every answer private, no-store: lists, reads, errors, the workspace list', async () => {
    const session = { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId! };
    const key = { authorization: `Bearer ${first.key}` };
    for (const [url, headers] of [
      ['/v1/collections', session],
      ['/v1/collections/leads/records', session],
      ['/v1/workspaces', { cookie: session.cookie }],
      ['/v1/collections/missing/records', session],
      ['/v1/collections/leads/records', key],
      ['/v1/collections', key],
      ['/v1/webhooks', key],
      ['/v1/collections/leads/records', { authorization: 'Bearer pb_not_a_key' }],
    ] as const) {
      const reply = await ask(url, headers);
      expect(reply.headers['cache-control'], `${url} ${reply.statusCode}`).toBe('private, no-store');
    }
  });

  it('anonymous: a public read by default must be asked again (no-cache) and varies; anything else, errors included, is no-store', async () => {
    const config = t.deps.config;
    t.deps.config = { ...config, publicMaxAgeSeconds: 0 };
    try {
      const read = await ask('/v1/collections/leads/records', { 'x-baas-workspace': owner.workspaceId! });
      expect(read.statusCode).toBe(200);
      expect(read.headers['cache-control']).toBe('no-cache');
      expect(read.headers.vary).toBe('x-baas-workspace, Authorization, Cookie, Origin');
    } finally {
      t.deps.config = config;
    }
    for (const url of ['/v1/collections/leads/records?trashed=true', '/v1/collections/leads/records', '/v1/collections', '/healthz', '/v1/auth/setup', '/v1/nowhere']) {
      const reply = await ask(url);
      expect(reply.headers['cache-control'], `${url} ${reply.statusCode}`).toBe('no-store');
      // The data API's answers all vary on Origin (it answers other origins: docs/security.md); nothing else varies.
      expect(reply.headers.vary, url).toBe(url.startsWith('/v1/collections') ? 'Origin' : undefined);
    }
  });

  it('the API documentation keeps the headers its own plugin sets', async () => {
    const docs = await ask('/docs/static/index.css');
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['cache-control']).toBe('public, max-age=0');
  });
});

describe('merging Vary', () => {
  it('adds each name once, whatever its case, keeps what was there, and leaves * alone', () => {
    expect(mergedVary(undefined, ['x-baas-workspace', 'Origin'])).toBe('x-baas-workspace, Origin');
    expect(mergedVary('Accept-Encoding, origin', ['x-baas-workspace', 'Origin'])).toBe('Accept-Encoding, origin, x-baas-workspace');
    expect(mergedVary(['Accept-Encoding', 'X-BAAS-WORKSPACE'], ['x-baas-workspace'])).toBe('Accept-Encoding, X-BAAS-WORKSPACE');
    expect(mergedVary('*', ['Origin'])).toBe('*');
  });
});
