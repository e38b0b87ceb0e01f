import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CountingReceiver } from './support/counting-receiver.js';
import { pgbouncerAvailable, startPgBouncer, type PgBouncer } from './support/pgbouncer.js';
import { call as callServer, createDatabase, listAll, signInOwner, startServer, stopServer, type Reply, type ServerProcess } from './support/server-process.js';
import { EventStreamReader } from './support/sse.js';

/**
 * docs/scaling.md, "Behind a connection pooler": Plainbase on PostgreSQL through a real PgBouncer
 * in transaction mode with a pool of 4 server connections, PLAINBASE_DATABASE_DIRECT_URL beside
 * it, two API processes and one worker process, each a real `node bin/plainbase.js serve`. Every
 * answer of the run is kept: none may be a 5xx, and everything written must be read back, fed,
 * streamed and delivered once. Without the direct URL (or with a pooler as the direct URL) the
 * start refuses with one line naming PLAINBASE_DATABASE_DIRECT_URL.
 */
const postgresUrl = inject('postgresUrl');
const runs = postgresUrl !== null && pgbouncerAvailable();
const LOOPBACK_WEBHOOKS = { PLAINBASE_ENV: 'development', PLAINBASE_WEBHOOK_ALLOW_PRIVATE: '1' };
const CREATES = 200;
const IMPORTED = 300;

describe.skipIf(!runs)('PostgreSQL behind PgBouncer in transaction mode [postgres]', () => {
  const receiver = new CountingReceiver();
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let bouncer: PgBouncer | undefined;
  let dataDir: string;
  const processes: ServerProcess[] = [];
  let apiA: ServerProcess;
  let apiB: ServerProcess;
  let owner: Record<string, string>;
  /** Every answer with a status of 500 or more, whatever the step. */
  const failures: string[] = [];
  const call = async (base: string, method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<Reply> => {
    const reply = await callServer(base, method, url, headers, body);
    if (reply.status >= 500) failures.push(`${method} ${url}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply;
  };

  beforeAll(async () => {
    database = await createDatabase(postgresUrl!, 'plainbase_pgb');
    bouncer = await startPgBouncer({ poolMode: 'transaction', poolSize: 4, upstream: database.url });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-pgb-'));
    const start = async (name: string, env: Record<string, string>) => {
      const started = await startServer({
        ...LOOPBACK_WEBHOOKS,
        PLAINBASE_DATABASE_URL: bouncer!.url,
        PLAINBASE_DATABASE_DIRECT_URL: database!.url,
        PLAINBASE_DATA_DIR: path.join(dataDir, name),
        ...env,
      });
      processes.push(started);
      return started;
    };
    // The first migrates the fresh database (on the direct URL) and creates the owner.
    apiA = await start('api-a', { PLAINBASE_WORKER: 'off' });
    let worker: ServerProcess;
    [apiB, worker] = await Promise.all([start('api-b', { PLAINBASE_WORKER: 'off' }), start('worker', { PLAINBASE_API: 'off', PLAINBASE_WORKER: 'on' })]);
    receiver.pids = [worker.child.pid!];
    owner = await signInOwner(apiA.base);
  }, 240_000);

  afterAll(async () => {
    await Promise.all(processes.map((server) => stopServer(server)));
    await receiver.stop();
    await bouncer?.stop();
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('creates, lists of many shapes, gets, an import, an export, the feed, the stream and webhooks: no 5xx, nothing lost; a revoked key is refused', async () => {
    const hookUrl = await receiver.start();
    expect(hookUrl).toMatch(/^http:\/\/localhost:/);
    expect((await call(apiA.base, 'POST', '/v1/collections', owner, { name: 'items' })).status).toBe(201);
    expect((await call(apiB.base, 'POST', '/v1/webhooks', owner, { url: hookUrl, events: ['record.created'] })).status).toBe(201);
    const created = await call(apiA.base, 'POST', '/v1/keys', owner, { name: 'pooled', scopes: ['collections:read', 'records:read', 'records:create'] });
    expect(created.status).toBe(201);
    const key = { authorization: `Bearer ${created.body.secret}` };
    const stream = await EventStreamReader.open(`${apiB.base}/v1/events/stream`, key);
    expect(stream.status).toBe(200);

    // Creates from 16 callers at once across both APIs: more than the pooler's 4 server sessions.
    let next = 0;
    const ids: string[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < CREATES) {
          const i = next++;
          const reply = await call((i % 2 ? apiB : apiA).base, 'POST', '/v1/collections/items/records', key, { data: { i, group: i % 5, name: `n${String(i).padStart(3, '0')}` } });
          expect(reply.status).toBe(201);
          ids.push(reply.body.id);
        }
      }),
    );

    // Lists of many shapes, each run several times on both APIs so every pooled session meets them.
    const shapes = [
      '',
      '?limit=7',
      '?sort=-data.i&limit=10',
      `?filter=${encodeURIComponent('data.group = 3')}&count=true`,
      `?filter=${encodeURIComponent('data.i >= 150 && data.group < 2')}&sort=data.name&limit=5`,
      '?fields=data.name&sort=-createdAt&limit=3',
    ];
    await Promise.all(
      Array.from({ length: 4 }, (_, round) =>
        Promise.all(
          shapes.map(async (shape) => {
            const reply = await call((round % 2 ? apiB : apiA).base, 'GET', `/v1/collections/items/records${shape}`, key);
            expect(reply.status, shape).toBe(200);
          }),
        ),
      ),
    );
    const counted = await call(apiB.base, 'GET', `/v1/collections/items/records?filter=${encodeURIComponent('data.group = 3')}&count=true`, key);
    expect(counted.body.total).toBe(CREATES / 5);
    // A cursor walk through one API with a sort.
    const sorted = await listAll(apiA.base, '/v1/collections/items/records?sort=-data.i', key);
    expect(sorted.map((record) => record.data.i)).toEqual(Array.from({ length: CREATES }, (_, i) => CREATES - 1 - i));
    // Gets, alternating APIs.
    await Promise.all(
      ids.slice(0, 60).map(async (id, i) => {
        const reply = await call((i % 2 ? apiA : apiB).base, 'GET', `/v1/collections/items/records/${id}`, key);
        expect(reply.status).toBe(200);
        expect(reply.body.id).toBe(id);
      }),
    );

    // An import (one transaction, COPY on PostgreSQL) through the pooler.
    const lines = Array.from({ length: IMPORTED }, (_, i) => JSON.stringify({ i: CREATES + i, group: (CREATES + i) % 5, name: `m${i}` })).join('\n');
    const imported = await fetch(`${apiB.base}/v1/collections/items/import`, { method: 'POST', headers: { ...key, 'content-type': 'application/x-ndjson' }, body: lines });
    const report = await imported.json();
    if (imported.status >= 500) failures.push(`import: ${imported.status} ${JSON.stringify(report)}`);
    expect(imported.status, JSON.stringify(report)).toBe(200);
    const total = CREATES + IMPORTED;

    // An export, read through a snapshot on a pooled session.
    const exported = await fetch(`${apiA.base}/v1/collections/items/export`, { headers: key });
    const exportText = await exported.text();
    if (exported.status >= 500) failures.push(`export: ${exported.status} ${exportText}`);
    expect(exported.status).toBe(200);
    const exportedIs = exportText.split('\n').filter(Boolean).map((line) => JSON.parse(line).data.i);
    expect(new Set(exportedIs).size).toBe(total);

    // The feed (paged) and the stream see every record.created once.
    const feed = await listAll(apiA.base, '/v1/events?types=record.created', key);
    expect(feed.length).toBe(total);
    expect(new Set(feed.map((event) => event.id)).size).toBe(total);
    await stream.until((reader) => reader.events.filter((event) => event.event === 'record.created').length >= total, 60_000, `${total} streamed events`);
    stream.close();

    // Webhooks: each event delivered, once, by the worker, to `localhost`.
    await receiver.until(() => receiver.attempts.size >= total, 120_000, `${total} deliveries`);
    expect(receiver.attempts.size).toBe(total);
    expect([...receiver.attempts.values()].every((attempts) => attempts === 1)).toBe(true);

    // A key revoked on A is refused on B at once.
    expect((await call(apiA.base, 'POST', `/v1/keys/${created.body.id}/revoke`, owner)).status).toBe(200);
    const refused = await call(apiB.base, 'GET', '/v1/collections/items/records', key);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('INVALID_API_KEY');

    expect(failures).toEqual([]);
    expect(bouncer!.log()).not.toMatch(/prepared statement|FATAL/);
  }, 240_000);

  /** The lines a start that failed printed, from startServer's error. */
  const refusal = async (env: Record<string, string>): Promise<string[]> => {
    const error = await startServer({ PLAINBASE_DATA_DIR: path.join(dataDir, `refused-${Math.random()}`), ...env }, 30_000).then(
      (server) => {
        processes.push(server);
        return null;
      },
      (failed: Error) => failed,
    );
    expect(error?.message).toMatch(/server exited \(1\)/);
    return error!.message.split('\n').filter((line) => line.includes('PLAINBASE_DATABASE_DIRECT_URL'));
  };

  it('without PLAINBASE_DATABASE_DIRECT_URL a start behind the transaction pooler refuses with one line naming it', async () => {
    const lines = await refusal({ PLAINBASE_DATABASE_URL: bouncer!.url });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^plainbase: PLAINBASE_DATABASE_URL: .*looks like a transaction-mode pooler.*set PLAINBASE_DATABASE_DIRECT_URL/);
  }, 60_000);

  it('a PLAINBASE_DATABASE_DIRECT_URL that is the pooler itself, or another database, or unreachable, is refused', async () => {
    const pooler = await refusal({ PLAINBASE_DATABASE_URL: bouncer!.url, PLAINBASE_DATABASE_DIRECT_URL: bouncer!.url });
    expect(pooler).toHaveLength(1);
    expect(pooler[0]).toMatch(/^plainbase: PLAINBASE_DATABASE_DIRECT_URL: .*looks like a transaction-mode pooler too/);
    const other = await refusal({ PLAINBASE_DATABASE_URL: bouncer!.url, PLAINBASE_DATABASE_DIRECT_URL: postgresUrl! });
    expect(other).toHaveLength(1);
    expect(other[0]).toMatch(/^plainbase: PLAINBASE_DATABASE_DIRECT_URL: .*both must lead to the same database/);
    const unreachable = new URL(database!.url);
    unreachable.port = '1';
    const down = await refusal({ PLAINBASE_DATABASE_URL: bouncer!.url, PLAINBASE_DATABASE_DIRECT_URL: unreachable.toString() });
    expect(down).toHaveLength(1);
    expect(down[0]).toMatch(/^plainbase: PLAINBASE_DATABASE_DIRECT_URL: cannot use the database/);
  }, 90_000);
});
