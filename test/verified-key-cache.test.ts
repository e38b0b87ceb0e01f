import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { VerifiedKeyRows } from '../src/modules/keys/verified-key-rows.js';
import { addMember, Client, expectError, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * The key check keeps the rows of recently used keys in memory where the engine can say exactly
 * when they may have changed (SQLite; modules/keys/verified-key-rows.ts). Whatever the cache
 * holds, every change must hold on the very next request: each test uses a key until its rows are
 * cached, changes something, and asks again at once, without waiting. On PostgreSQL there is no
 * cache; the same tests run there to show the same answers.
 */
describeEachEngine('verified-key cache', (engine) => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  async function keyed(scopes: string[], extra: Record<string, unknown> = {}) {
    t = await startTestApp(engine);
    const owner = await signedInOwner(t);
    expect((await owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
    const created = await owner.post('/v1/keys', { name: 'program', scopes, ...extra });
    expect(created.status).toBe(201);
    const auth = { authorization: `Bearer ${created.body.secret}` };
    const api = new Client(t);
    const read = () => api.call('GET', '/v1/collections/leads/records', undefined, auth);
    const write = () => api.call('POST', '/v1/collections/leads/records', { data: { n: 1 } }, auth);
    // Used twice: from the second request on, the key's rows come from the cache where there is one.
    expect((await read()).status).toBe(200);
    expect((await read()).status).toBe(200);
    const cache = VerifiedKeyRows.of(t.deps.db);
    if (engine === 'sqlite') expect(cache?.get(created.body.id)).toHaveLength(1);
    else expect(cache).toBeNull();
    return { owner, key: created.body, auth, api, read, write };
  }

  it('a revoked key is refused on the next request', async () => {
    const { owner, key, read } = await keyed(['records:read']);
    expect((await owner.post(`/v1/keys/${key.id}/revoke`)).status).toBe(200);
    expectError(await read(), 401, 'INVALID_API_KEY');
  });

  it('a rotated key: the old secret is refused on the next request once its grace is over, the new one works', async () => {
    const { owner, key, read, api } = await keyed(['records:read']);
    const rotated = await owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 0 });
    expect(rotated.status).toBe(200);
    expectError(await read(), 401, 'INVALID_API_KEY');
    expect((await api.call('GET', '/v1/collections/leads/records', undefined, { authorization: `Bearer ${rotated.body.secret}` })).status).toBe(200);
  });

  it('a key whose creator is demoted loses the abilities of the old role on the next request; removed, it is refused', async () => {
    t = await startTestApp(engine);
    const owner = await signedInOwner(t);
    expect((await owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
    const editor = await addMember(t, owner, 'ed@example.com', 'editor');
    const created = await editor.post('/v1/keys', { name: 'ed', scopes: ['records:read', 'records:create'] });
    expect(created.status).toBe(201);
    const auth = { authorization: `Bearer ${created.body.secret}` };
    const api = new Client(t);
    const write = () => api.call('POST', '/v1/collections/leads/records', { data: { n: 1 } }, auth);
    expect((await write()).status).toBe(201);
    expect((await write()).status).toBe(201);

    expect((await owner.patch(`/v1/members/${editor.personId}`, { role: 'viewer' })).status).toBe(200);
    expectError(await write(), 403, 'MISSING_SCOPE');
    expect((await api.call('GET', '/v1/collections/leads/records', undefined, auth)).status).toBe(200);

    expect((await owner.delete(`/v1/members/${editor.personId}`)).status).toBe(204);
    expectError(await api.call('GET', '/v1/collections/leads/records', undefined, auth), 401, 'INVALID_API_KEY');
  });

  it("a service account's key is refused on the next request once the account is deleted", async () => {
    t = await startTestApp(engine);
    const owner = await signedInOwner(t);
    expect((await owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
    const { body: robot } = await owner.post('/v1/service-accounts', { name: 'robot', role: 'editor' });
    const created = await owner.post('/v1/keys', { name: 'robot key', scopes: ['records:read'], serviceAccountId: robot.id });
    const auth = { authorization: `Bearer ${created.body.secret}` };
    const api = new Client(t);
    for (let i = 0; i < 2; i++) expect((await api.call('GET', '/v1/collections/leads/records', undefined, auth)).status).toBe(200);
    expect((await owner.delete(`/v1/service-accounts/${robot.id}`)).status).toBe(204);
    expectError(await api.call('GET', '/v1/collections/leads/records', undefined, auth), 401, 'INVALID_API_KEY');
  });

  it('expiry is judged on every request, never cached', async () => {
    const { read } = await keyed(['records:read'], { expiresAt: '2026-11-22T10:00:05.000Z' });
    t.clock.advance(5_000);
    expectError(await read(), 401, 'API_KEY_EXPIRED');
  });

  it('a wrong secret for a cached key is refused: the cache keeps rows, never a verdict', async () => {
    const { key, api } = await keyed(['records:read']);
    const forged = `pb_live_${key.id.slice('key_'.length)}_${'A'.repeat(49)}`;
    expectError(await api.call('GET', '/v1/collections/leads/records', undefined, { authorization: `Bearer ${forged}` }), 401, 'INVALID_API_KEY');
  });

  if (engine === 'sqlite') {
    it('a key revoked by another connection (another process, the CLI) is refused on the next request', async () => {
      const { key, read } = await keyed(['records:read']);
      // What `plainbase` run beside the server does: its own connection to the same file.
      const other = new Database(t.deps.config.database.engine === 'sqlite' ? t.deps.config.database.file : '');
      try {
        other.prepare('update api_keys set revoked_at = ? where id = ?').run('2026-11-22T10:00:00.000Z', key.id);
      } finally {
        other.close();
      }
      expectError(await read(), 401, 'INVALID_API_KEY');
    });
  }
});
