import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CountingReceiver } from './support/counting-receiver.js';
import { call, createDatabase, listAll, sessionHeaders, signInOwner, startServer, stopServer, type ServerProcess } from './support/server-process.js';

/**
 * docs/scaling.md: the deployment of several processes on one PostgreSQL, as run behind a load
 * balancer: two API processes (PLAINBASE_WORKER=off) and two worker processes (PLAINBASE_API=off),
 * every one a real `node bin/plainbase.js serve` on a fresh database. The load alternates between
 * the two APIs; the webhook receiver tells which process made each call (/proc), so it can show
 * that only the workers deliver, both of them, and never one delivery twice at once.
 */
const postgresUrl = inject('postgresUrl');
const CREATES = 300;
/** Every process may let webhooks call loopback receivers over plain HTTP (the API checks the URL when saved). */
const LOOPBACK_WEBHOOKS = { PLAINBASE_ENV: 'development', PLAINBASE_WEBHOOK_ALLOW_PRIVATE: '1' };

describe.skipIf(postgresUrl === null)('two API and two worker processes on one PostgreSQL [postgres]', () => {
  const receiver = new CountingReceiver();
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let dataDir: string;
  const processes: ServerProcess[] = [];
  let apiA: ServerProcess;
  let apiB: ServerProcess;
  let owner: Record<string, string>;

  beforeAll(async () => {
    database = await createDatabase(postgresUrl!, 'plainbase_n');
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-n-'));
    const start = async (name: string, env: Record<string, string>) => {
      const started = await startServer({ ...LOOPBACK_WEBHOOKS, PLAINBASE_DATABASE_URL: database!.url, PLAINBASE_DATA_DIR: path.join(dataDir, name), ...env });
      processes.push(started);
      return started;
    };
    // The first migrates the fresh database and creates the owner; the others find both done.
    apiA = await start('api-a', { PLAINBASE_WORKER: 'off' });
    let workers: ServerProcess[];
    [apiB, ...workers] = await Promise.all([
      start('api-b', { PLAINBASE_WORKER: 'off' }),
      start('worker-1', { PLAINBASE_API: 'off', PLAINBASE_WORKER: 'on' }),
      start('worker-2', { PLAINBASE_API: 'off', PLAINBASE_WORKER: 'on' }),
    ]);
    receiver.pids = workers.map((worker) => worker.child.pid!);
    owner = await signInOwner(apiA.base);
  }, 240_000);

  afterAll(async () => {
    await Promise.all(processes.map((server) => stopServer(server)));
    await receiver.stop();
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it(`a stream of ${CREATES} creates across both APIs loses nothing, and the two workers deliver each event once`, async () => {
    const hookUrl = await receiver.start();
    expect((await call(apiA.base, 'POST', '/v1/collections', owner, { name: 'stream' })).status).toBe(201);
    // Saved through B: the workers must find a webhook whichever API process wrote it.
    const webhook = await call(apiB.base, 'POST', '/v1/webhooks', owner, { url: hookUrl, events: ['record.created'] });
    expect(webhook.status).toBe(201);

    let next = 0;
    const created: string[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < CREATES) {
          const i = next++;
          const reply = await call((i % 2 ? apiB : apiA).base, 'POST', '/v1/collections/stream/records', owner, { data: { i } });
          expect(reply.status).toBe(201);
          created.push(reply.body.id);
        }
      }),
    );
    const stored = await listAll(apiB.base, '/v1/collections/stream/records', owner);
    expect(new Set(stored.map((record) => record.id))).toEqual(new Set(created));
    expect(stored.map((record) => record.data.i).sort((x, y) => x - y)).toEqual(Array.from({ length: CREATES }, (_, i) => i));

    await receiver.until(() => receiver.attempts.size >= CREATES, 120_000, `${CREATES} deliveries at the receiver`);
    expect(receiver.maxInFlightPerDelivery).toBe(1);
    expect([...receiver.attempts.values()].filter((count) => count !== 1)).toEqual([]);
    const events = await listAll(apiA.base, '/v1/events?types=record.created', owner);
    expect(new Set(receiver.attempts.keys())).toEqual(new Set(events.map((event) => event.id)));
    // Only the worker processes call out (an API process's call would be "unknown"), and both do.
    if (process.platform === 'linux') {
      const byPid = Object.fromEntries(receiver.callsBy);
      expect(byPid.unknown, JSON.stringify(byPid)).toBeUndefined();
      for (const pid of receiver.pids) expect(byPid[String(pid)], JSON.stringify(byPid)).toBeGreaterThan(0);
    }
  }, 240_000);

  it('a key revoked through one API process is refused by the other on its next request', async () => {
    const created = await call(apiA.base, 'POST', '/v1/keys', owner, { name: 'shared', scopes: ['collections:read'] });
    expect(created.status).toBe(201);
    const key = { authorization: `Bearer ${created.body.secret}` };
    expect((await call(apiB.base, 'GET', '/v1/collections', key)).status).toBe(200);
    expect((await call(apiA.base, 'POST', `/v1/keys/${created.body.id}/revoke`, owner)).status).toBe(200);
    const refused = await call(apiB.base, 'GET', '/v1/collections', key);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('INVALID_API_KEY');
  });

  it('a person demoted through one API process loses those abilities at the other on the next request', async () => {
    const invite = await call(apiA.base, 'POST', '/v1/invites', owner, { email: 'ada@example.com', role: 'admin' });
    expect(invite.status).toBe(201);
    const accepted = await call(apiB.base, 'POST', `/v1/invites/${invite.body.token}/accept`, {}, { name: 'Ada', password: 'member password 1' });
    expect(accepted.status).toBe(200);
    const ada = sessionHeaders(accepted, owner['x-baas-workspace']);
    expect((await call(apiB.base, 'POST', '/v1/invites', ada, { email: 'first@example.com', role: 'viewer' })).status).toBe(201);
    expect((await call(apiB.base, 'POST', '/v1/collections/stream/records', ada, { data: { by: 'ada' } })).status).toBe(201);

    expect((await call(apiA.base, 'PATCH', `/v1/members/${accepted.body.person.id}`, owner, { role: 'viewer' })).status).toBe(200);
    const invites = await call(apiB.base, 'POST', '/v1/invites', ada, { email: 'second@example.com', role: 'viewer' });
    expect(invites.status).toBe(403);
    expect(invites.body.error.code).toBe('FORBIDDEN');
    expect((await call(apiB.base, 'POST', '/v1/collections/stream/records', ada, { data: { by: 'ada' } })).status).toBe(403);
    // What a viewer keeps, it keeps.
    expect((await call(apiB.base, 'GET', '/v1/collections/stream/records?limit=1', ada)).status).toBe(200);
  });
});
