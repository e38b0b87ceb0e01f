import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectStorage, type Storage } from '../src/db/connect.js';
import { readPrepared } from '../src/db/direct-query.js';
import { dropsNotifications } from '../src/db/listen-probe.js';
import { migrateStorage } from '../src/db/migrate.js';
import { pgbouncerAvailable, startPgBouncer, type PgBouncer } from './support/pgbouncer.js';
import { createDatabase } from './support/server-process.js';

/**
 * What PLAINBASE_DATABASE_DIRECT_URL changes in one process's connections (connect.ts), seen on
 * the database itself: the pool's statements are unnamed only with a direct URL (a direct
 * connection keeps them named), migrations and LISTEN go to the direct URL, and the start-time
 * probe (listen-probe.ts) tells a transaction-mode PgBouncer from a server and a session-mode one.
 */
const postgresUrl = inject('postgresUrl');
const runs = postgresUrl !== null && pgbouncerAvailable();

describe.skipIf(!runs)('connections behind a pooler [postgres]', () => {
  let database: Awaited<ReturnType<typeof createDatabase>>;
  let transaction: PgBouncer;
  let session: PgBouncer;
  const opened: Storage[] = [];
  const open = async (url: string, directUrl?: string) => {
    // One pooled connection, so that pg_prepared_statements is read on the connection that ran the query.
    const storage = await connectStorage({ engine: 'postgres', url, directUrl }, { poolSize: 1 });
    opened.push(storage);
    return storage;
  };
  const preparedNames = async (storage: Storage) =>
    (await sql<{ name: string }>`select name from pg_prepared_statements`.execute(storage.db)).rows.map((row) => row.name);

  beforeAll(async () => {
    database = await createDatabase(postgresUrl!, 'plainbase_pooler');
    [transaction, session] = await Promise.all([
      startPgBouncer({ poolMode: 'transaction', poolSize: 2, upstream: database.url }),
      startPgBouncer({ poolMode: 'session', poolSize: 2, upstream: database.url }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(opened.map((storage) => storage.close()));
    await Promise.all([transaction?.stop(), session?.stop()]);
    await database?.drop();
  }, 60_000);

  it('a direct connection keeps named statements; with a direct URL the pool sends them unnamed', async () => {
    const direct = await open(database.url);
    const text = 'select $1::int + 1 as answer';
    expect(await readPrepared(direct.db, text, [41])).toEqual([{ answer: 42 }]);
    expect((await preparedNames(direct)).filter((name) => name.startsWith('plainbase_text_'))).toHaveLength(1);

    const pooled = await open(database.url, database.url);
    expect(await readPrepared(pooled.db, text, [41])).toEqual([{ answer: 42 }]);
    expect(await preparedNames(pooled)).toEqual([]);
  });

  it('behind the transaction pooler, migrations run on the direct URL and LISTEN hears NOTIFY sent through the pooler', async () => {
    const pooled = await open(transaction.url, database.url);
    const migration = await pooled.openMigrationConnection();
    expect(migration.db).not.toBe(pooled.db);
    await migration.close();
    expect((await migrateStorage(pooled)).length).toBeGreaterThan(5);
    expect(await migrateStorage(pooled)).toEqual([]);
    const { rows } = await sql<{ n: number }>`select count(*) as n from plainbase_migrations`.execute(pooled.db);
    expect(rows[0]!.n).toBeGreaterThan(5);

    let heard = 0;
    const stop = pooled.dialect.listen('plainbase_events', () => (heard += 1));
    try {
      // The listener connects in the background; NOTIFY until it hears one (a wait for a connection, bounded).
      const deadline = Date.now() + 10_000;
      while (heard === 0 && Date.now() < deadline) {
        await sql`select pg_notify('plainbase_events', '')`.execute(pooled.db);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(heard).toBeGreaterThan(0);
    } finally {
      stop();
    }
  }, 60_000);

  it('the probe: a server and a session-mode PgBouncer pass NOTIFY to a listener, a transaction-mode PgBouncer does not', async () => {
    expect(await dropsNotifications(database.url)).toBe(false);
    expect(await dropsNotifications(session.url)).toBe(false);
    expect(await dropsNotifications(transaction.url)).toBe(true);
  }, 30_000);

  it('a start check through connectStorage refuses the transaction pooler alone and accepts it beside the direct URL', async () => {
    await expect(connectStorage({ engine: 'postgres', url: transaction.url }, { poolSize: 1, checkPooler: true })).rejects.toThrow(/looks like a transaction-mode pooler.*PLAINBASE_DATABASE_DIRECT_URL/);
    const started = await connectStorage({ engine: 'postgres', url: transaction.url, directUrl: database.url }, { poolSize: 1, checkPooler: true });
    opened.push(started);
    expect((await sql<{ one: number }>`select 1 as one`.execute(started.db)).rows).toEqual([{ one: 1 }]);
  }, 30_000);
});
