import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildDeps, closeServices } from '../src/build-services.js';
import { ManualClock } from '../src/clock.js';
import { connectStorage, type Storage } from '../src/db/connect.js';
import { migrateStorage } from '../src/db/migrate.js';
import type { Deps } from '../src/deps.js';
import { purgeExpired } from '../src/modules/housekeeping/purge-expired.js';
import { IDEMPOTENCY_WINDOW_MS } from '../src/modules/idempotency/idempotency.js';
import { createOwner } from '../src/modules/setup/first-owner.js';
import { testConfig } from './support/harness.js';
import { pgbouncerAvailable, startPgBouncer, type PgBouncer } from './support/pgbouncer.js';
import { createDatabase } from './support/server-process.js';

/**
 * Housekeeping's lock is transaction-scoped so that it works behind a pooler in transaction mode,
 * where a session-level lock would stay on whichever server connection took it: two "processes"
 * through a real PgBouncer (pool of 2 server connections) purge at once, without errors, each
 * row once, while the lock held by one keeps the other out.
 */
const postgresUrl = inject('postgresUrl');
const runs = postgresUrl !== null && pgbouncerAvailable();

describe.skipIf(!runs)('housekeeping behind PgBouncer in transaction mode [postgres]', () => {
  let database: Awaited<ReturnType<typeof createDatabase>>;
  let bouncer: PgBouncer;
  const storages: Storage[] = [];
  const processes: Deps[] = [];
  const clock = new ManualClock();
  let workspaceId: string;

  beforeAll(async () => {
    database = await createDatabase(postgresUrl!, 'plainbase_hk');
    bouncer = await startPgBouncer({ poolMode: 'transaction', poolSize: 2, upstream: database.url });
    const settings = { engine: 'postgres' as const, url: bouncer.url, directUrl: database.url };
    const config = testConfig({ database: settings });
    for (let i = 0; i < 2; i++) {
      const storage = await connectStorage(settings, { poolSize: 4 });
      storages.push(storage);
      if (i === 0) await migrateStorage(storage);
      processes.push(buildDeps(config, storage, clock));
    }
    ({ workspace: { id: workspaceId } } = await createOwner(processes[0]!, { email: 'owner@example.com', password: 'correct horse battery' }));
  }, 120_000);

  afterAll(async () => {
    for (const [i, deps] of processes.entries()) {
      await closeServices(deps);
      await storages[i]!.close();
    }
    await bouncer?.stop();
    await database?.drop();
  });

  it('two processes purge at once, each row once; the lock keeps one out while the other holds it', async () => {
    const db = processes[0]!.db;
    const insert = async (prefix: string, count: number) => {
      const at = clock.now().toISOString();
      for (let i = 0; i < count; i += 500) {
        const rows = Array.from({ length: Math.min(500, count - i) }, (_, j) => ({
          workspace_id: workspaceId, caller_id: 'per_test', key: `${prefix}-${String(i + j).padStart(5, '0')}`, request_hash: 'x', status: 201, body: '{}', created_at: at,
        }));
        await db.insertInto('idempotency_keys').values(rows).execute();
      }
    };
    await insert('old', 2000);
    clock.advance(IDEMPOTENCY_WINDOW_MS + 60_000);
    await insert('fresh', 5);

    await db.transaction().execute(async (trx) => {
      const { rows } = await processes[0]!.dialect.housekeepingLock!.execute(trx);
      expect(rows[0]?.claimed).toBe(true);
      expect(await purgeExpired(processes[1]!, 100)).toMatchObject({ claimed: false, batches: 0 });
    });

    const rounds = await Promise.all([purgeExpired(processes[0]!, 100), purgeExpired(processes[1]!, 100), purgeExpired(processes[1]!, 100)]);
    rounds.push(await purgeExpired(processes[0]!, 100));
    expect(rounds.reduce((sum, round) => sum + round.purged.idempotencyAnswers!, 0)).toBe(2000);
    const left = await db.selectFrom('idempotency_keys').select('key').orderBy('key').execute();
    expect(left.map((row) => row.key)).toEqual(['fresh-00000', 'fresh-00001', 'fresh-00002', 'fresh-00003', 'fresh-00004']);
  });
});
