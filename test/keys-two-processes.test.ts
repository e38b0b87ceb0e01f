import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, createDatabase, OWNER, sessionHeaders, startServer, stopServer, type ServerProcess } from './support/server-process.js';

/**
 * docs/design.md §1: several processes on one PostgreSQL must be correct, and a revoked key is refused
 * by every process on its next request. Two real servers (`node bin/plainbase.js serve`) share a
 * fresh database; a change made through A must hold on B's very next request. No process trusts
 * a key it read before (on PostgreSQL B's record routes start on its earlier reading as a guess,
 * which their own statement checks: src/modules/keys/key-guess.ts), so there is nothing to wait
 * for: the test never sleeps between the change and the check.
 */
const postgresUrl = inject('postgresUrl');

describe.skipIf(postgresUrl === null)('API keys across two server processes [postgres]', () => {
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let dataDir: string;
  let a: ServerProcess | undefined;
  let b: ServerProcess | undefined;
  let owner: Record<string, string>;

  beforeAll(async () => {
    database = await createDatabase(postgresUrl!, 'plainbase_two');
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-two-'));
    // One after the other: A migrates the fresh database and creates the owner; B finds both done.
    a = await startServer({ PLAINBASE_DATABASE_URL: database.url, PLAINBASE_DATA_DIR: path.join(dataDir, 'a') });
    b = await startServer({ PLAINBASE_DATABASE_URL: database.url, PLAINBASE_DATA_DIR: path.join(dataDir, 'b') });
    const signIn = await call(a.base, 'POST', '/v1/auth/sign-in', {}, OWNER);
    expect(signIn.status).toBe(200);
    owner = sessionHeaders(signIn);
  }, 150_000);

  afterAll(async () => {
    await Promise.all([stopServer(a), stopServer(b)]);
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  /** A create, a get and a list of the collection through B: their statuses. */
  async function recordRoutesOnB(key: Record<string, string>, collection: string): Promise<number[]> {
    const created = await call(b!.base, 'POST', `/v1/collections/${collection}/records`, key, { data: { n: 1 } });
    const recordId = created.body.id ?? 'rec_none';
    const got = await call(b!.base, 'GET', `/v1/collections/${collection}/records/${recordId}`, key);
    const listed = await call(b!.base, 'GET', `/v1/collections/${collection}/records?limit=5`, key);
    return [created.status, got.status, listed.status];
  }

  it('a key made on A works on B; revoked on A, it is refused by B on the next request, record routes included', async () => {
    const created = await call(a!.base, 'POST', '/v1/keys', owner, { name: 'shared', scopes: ['collections:read', 'records:read', 'records:create'] });
    expect(created.status).toBe(201);
    const key = { authorization: `Bearer ${created.body.secret}` };
    expect((await call(a!.base, 'POST', '/v1/collections', owner, { name: 'shared_notes' })).status).toBe(201);
    expect((await call(b!.base, 'GET', '/v1/me', key)).status).toBe(200);
    expect((await call(b!.base, 'GET', '/v1/collections', key)).status).toBe(200);
    // Twice: B has read the key and the collection before, as a busy process has.
    expect(await recordRoutesOnB(key, 'shared_notes')).toEqual([201, 200, 200]);
    expect(await recordRoutesOnB(key, 'shared_notes')).toEqual([201, 200, 200]);

    expect((await call(a!.base, 'POST', `/v1/keys/${created.body.id}/revoke`, owner)).status).toBe(200);
    const refused = await call(b!.base, 'GET', '/v1/collections', key);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('INVALID_API_KEY');
    expect(await recordRoutesOnB(key, 'shared_notes')).toEqual([401, 401, 401]);
    expect((await call(a!.base, 'GET', '/v1/me', key)).status).toBe(401);
  });

  it('rotated with grace 0 on A, the old secret is refused by B at once and the new one works there', async () => {
    const created = await call(a!.base, 'POST', '/v1/keys', owner, { name: 'rotating', scopes: ['collections:read'] });
    const old = { authorization: `Bearer ${created.body.secret}` };
    expect((await call(b!.base, 'GET', '/v1/me', old)).status).toBe(200);
    const rotated = await call(a!.base, 'POST', `/v1/keys/${created.body.id}/rotate`, owner, { gracePeriodSeconds: 0 });
    expect(rotated.status).toBe(200);
    const refused = await call(b!.base, 'GET', '/v1/me', old);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('INVALID_API_KEY');
    expect((await call(b!.base, 'GET', '/v1/me', { authorization: `Bearer ${rotated.body.secret}` })).status).toBe(200);
  });

  it("demoting the creator on A shrinks the key's effective scopes on B at once", async () => {
    const invite = await call(a!.base, 'POST', '/v1/invites', owner, { email: 'ed@example.com', role: 'editor' });
    expect(invite.status).toBe(201);
    const accepted = await call(a!.base, 'POST', `/v1/invites/${invite.body.token}/accept`, {}, { name: 'Ed', password: 'member password 1' });
    expect(accepted.status).toBe(200);
    const editor = sessionHeaders(accepted, owner['x-baas-workspace']);
    const created = await call(a!.base, 'POST', '/v1/keys', editor, { name: 'editor key', scopes: ['records:read', 'records:create'] });
    expect(created.status).toBe(201);
    const key = { authorization: `Bearer ${created.body.secret}` };
    expect((await call(b!.base, 'GET', '/v1/me', key)).body.effectiveScopes).toEqual(['records:read', 'records:create']);
    await call(a!.base, 'POST', '/v1/collections', owner, { name: 'leads' });
    expect(await recordRoutesOnB(key, 'leads')).toEqual([201, 200, 200]);
    expect(await recordRoutesOnB(key, 'leads')).toEqual([201, 200, 200]);

    expect((await call(a!.base, 'PATCH', `/v1/members/${accepted.body.person.id}`, owner, { role: 'viewer' })).status).toBe(200);
    const me = await call(b!.base, 'GET', '/v1/me', key);
    expect(me.status).toBe(200);
    expect(me.body.effectiveScopes).toEqual(['records:read']);
    expect(me.body.suppressed).toEqual([{ scope: 'records:create', reason: expect.stringContaining('viewer') }]);
    const write = await call(b!.base, 'POST', '/v1/collections/leads/records', key, { data: {} });
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe('MISSING_SCOPE');
  });
});
