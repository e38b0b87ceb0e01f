import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CountingReceiver } from './support/counting-receiver.js';
import { call, createDatabase, listAll, signInOwner, startServer, stopServer, type ServerProcess } from './support/server-process.js';

/**
 * docs/webhooks.md, "Delivery guarantees": several worker processes on one PostgreSQL share the
 * work without attempting one delivery twice at the same time. Two real servers (`node
 * bin/plainbase.js serve`, both with the worker on) share a fresh database; a storm of record
 * events goes to one webhook whose receiver always answers 200. The receiver counts the calls
 * in flight per x-baas-delivery (never more than one) and all calls (exactly one per event: with
 * no crash, nothing is sent twice), and tells which process made each call from the owner of the
 * client socket (/proc, on Linux), to show that both workers took part.
 */
const postgresUrl = inject('postgresUrl');
const EVENTS = 500;
/** Both servers run the worker and may call loopback receivers over plain HTTP. */
const WEBHOOK_TEST_ENV = { PLAINBASE_ENV: 'development', PLAINBASE_WEBHOOK_ALLOW_PRIVATE: '1', PLAINBASE_WORKER: 'on' };

describe.skipIf(postgresUrl === null)('webhook delivery by two worker processes on one PostgreSQL [postgres]', () => {
  const receiver = new CountingReceiver();
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let dataDir: string;
  let hookUrl: string;
  let a: ServerProcess | undefined;
  let b: ServerProcess | undefined;

  beforeAll(async () => {
    hookUrl = await receiver.start();
    database = await createDatabase(postgresUrl!, 'plainbase_workers');
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-workers-'));
    // One after the other: A migrates the fresh database and creates the owner; B finds both done.
    a = await startServer({ ...WEBHOOK_TEST_ENV, PLAINBASE_DATABASE_URL: database.url, PLAINBASE_DATA_DIR: path.join(dataDir, 'a') });
    b = await startServer({ ...WEBHOOK_TEST_ENV, PLAINBASE_DATABASE_URL: database.url, PLAINBASE_DATA_DIR: path.join(dataDir, 'b') });
    receiver.pids = [a.child.pid!, b.child.pid!];
  }, 200_000);

  afterAll(async () => {
    await Promise.all([stopServer(a), stopServer(b)]);
    await receiver.stop();
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it(`delivers a storm of ${EVENTS} events exactly once each, never one delivery twice at a time, with both workers taking part`, async () => {
    const session = await signInOwner(a!.base);
    expect((await call(a!.base, 'POST', '/v1/collections', session, { name: 'storm' })).status).toBe(201);
    const webhook = await call(a!.base, 'POST', '/v1/webhooks', session, { url: hookUrl, events: ['record.created'] });
    expect(webhook.status).toBe(201);

    // The storm: one record per request, through both servers in turn, 16 requests at a time.
    let next = 0;
    const created: string[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < EVENTS) {
          const i = next++;
          const server = i % 2 === 0 ? a! : b!;
          const reply = await call(server.base, 'POST', '/v1/collections/storm/records', session, { data: { i } });
          expect(reply.status).toBe(201);
          created.push(reply.body.id);
        }
      }),
    );
    expect(created).toHaveLength(EVENTS);

    await receiver.until(() => receiver.attempts.size >= EVENTS, 90_000, `${EVENTS} deliveries at the receiver`);
    // The receiver has a call before a server logs it: wait for the logs to catch up.
    const deadline = Date.now() + 30_000;
    let pending = await listAll(a!.base, `/v1/webhooks/${webhook.body.id}/deliveries?state=pending`, session);
    while (pending.length > 0 && Date.now() < deadline) {
      await sleep(200); // polling the servers' database state, with a deadline
      pending = await listAll(a!.base, `/v1/webhooks/${webhook.body.id}/deliveries?state=pending`, session);
    }
    expect(pending).toEqual([]);
    const deliveries = await listAll(b!.base, `/v1/webhooks/${webhook.body.id}/deliveries`, session);
    expect(deliveries).toHaveLength(EVENTS);
    expect(deliveries.filter((delivery) => delivery.state !== 'succeeded' || delivery.attemptCount !== 1)).toEqual([]);

    // Nothing pending is left to send: these counts are final.
    expect(receiver.maxInFlightPerDelivery).toBe(1);
    expect(receiver.calls).toBe(EVENTS);
    expect([...receiver.attempts.values()].filter((count) => count !== 1)).toEqual([]);
    expect(new Set(receiver.attempts.keys())).toEqual(new Set(deliveries.map((delivery) => delivery.eventId)));

    // Both workers delivered some of the storm (where /proc tells which process made a call).
    const byPid = Object.fromEntries(receiver.callsBy);
    if (process.platform === 'linux') {
      expect(byPid.unknown, JSON.stringify(byPid)).toBeUndefined();
      expect(byPid[String(a!.child.pid)], JSON.stringify(byPid)).toBeGreaterThan(0);
      expect(byPid[String(b!.child.pid)], JSON.stringify(byPid)).toBeGreaterThan(0);
    }
  }, 180_000);
});
