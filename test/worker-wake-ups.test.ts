import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, createDatabase, OWNER, sessionHeaders, startServer, stopServer, type ServerProcess } from './support/server-process.js';

/**
 * Who wakes the webhook worker when events are written on PostgreSQL. A process that runs its own
 * worker wakes it in-process and sends no NOTIFY (each one costs the writing transaction a lock
 * at commit); a process without one (PLAINBASE_WORKER=off) wakes the workers of the others with
 * NOTIFY. Two real servers on a fresh database of their own (NOTIFY is heard database-wide, so no
 * other test's notifications can be counted), and a LISTEN connection that counts what is sent.
 */
const postgresUrl = inject('postgresUrl');

describe.skipIf(postgresUrl === null)('worker wake-ups across processes [postgres]', () => {
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let dataDir: string;
  let withWorker: ServerProcess | undefined;
  let apiOnly: ServerProcess | undefined;
  let listener: pg.Client | undefined;
  let heard = 0;

  beforeAll(async () => {
    database = await createDatabase(postgresUrl!, 'plainbase_wake');
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-wake-'));
    withWorker = await startServer({ PLAINBASE_DATABASE_URL: database.url, PLAINBASE_DATA_DIR: path.join(dataDir, 'a') });
    apiOnly = await startServer({ PLAINBASE_DATABASE_URL: database.url, PLAINBASE_DATA_DIR: path.join(dataDir, 'b'), PLAINBASE_WORKER: 'off' });
    listener = new pg.Client({ connectionString: database.url });
    await listener.connect();
    listener.on('notification', (message) => {
      if (message.channel === 'plainbase_events') heard += 1;
    });
    await listener.query('listen plainbase_events');
  }, 150_000);

  afterAll(async () => {
    await listener?.end().catch(() => undefined);
    await Promise.all([stopServer(withWorker), stopServer(apiOnly)]);
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('creates through a process with a worker send no NOTIFY; through one without, each wakes the others; the worker fans out both', async () => {
    const signIn = await call(withWorker!.base, 'POST', '/v1/auth/sign-in', {}, OWNER);
    const owner = sessionHeaders(signIn);
    expect((await call(withWorker!.base, 'POST', '/v1/collections', owner, { name: 'notes' })).status).toBe(201);
    const created = await call(withWorker!.base, 'POST', '/v1/keys', owner, { name: 'writer', scopes: ['records:create'] });
    const key = { authorization: `Bearer ${created.body.secret}` };
    const createOn = async (server: ServerProcess, count: number) => {
      // The first create of a process looks the collection up; the next ones are one statement each.
      for (let i = 0; i < count; i++) expect((await call(server.base, 'POST', '/v1/collections/notes/records', key, { data: { i } })).status).toBe(201);
    };

    await createOn(withWorker!, 5);
    await createOn(apiOnly!, 5);
    // Notifications arrive in commit order: any from the first five would come before these five.
    for (let waited = 0; heard < 5 && waited < 10_000; waited += 50) await sleep(50);
    await sleep(300);
    expect(heard).toBe(5);

    // The worker of the first process fanned out all ten events: its own, woken in-process, and
    // the other process's, woken by NOTIFY.
    const client = new pg.Client({ connectionString: database!.url });
    await client.connect();
    try {
      let pending = -1;
      for (let waited = 0; pending !== 0 && waited < 10_000; waited += 100) {
        const { rows } = await client.query<{ total: string; pending: string }>(
          "select count(*) as total, count(*) filter (where fanned_out_at is null) as pending from events where type = 'record.created'");
        expect(Number(rows[0]!.total)).toBe(10);
        pending = Number(rows[0]!.pending);
        if (pending !== 0) await sleep(100);
      }
      expect(pending).toBe(0);
    } finally {
      await client.end();
    }
  });
});
