import { sql, type KyselyPlugin } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Storage } from '../src/db/connect.js';
import { DatabaseUnavailable, mapDriverError, UniqueViolation } from '../src/db/db-errors.js';
import { dialectOf } from '../src/db/dialect.js';
import { directQuery } from '../src/db/direct-query.js';
import { writeTransaction } from '../src/db/group-commit.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { AppError } from '../src/errors.js';
import { describeEachEngine, freshStorage } from './support/harness.js';

const workspaceById = directQuery<{ id: string }>('test_dialect_workspace_by_id', (parameter) => `select id from workspaces where id = ${parameter(1)}`);

const addWorkspace = (db: Storage['db'], id: string) => db.insertInto('workspaces').values({ id, name: id, created_at: new Date().toISOString() }).execute();

describeEachEngine('the Dialect', (engine) => {
  let storage: Storage;
  beforeEach(async () => {
    storage = await freshStorage(engine);
    await migrateToLatest(storage.db);
  });
  afterEach(async () => { await storage.close(); });

  it('is the one connectStorage returned, from the Db, its transactions and its plugin instances alike', async () => {
    const plugin: KyselyPlugin = { transformQuery: (args) => args.node, transformResult: async (args) => args.result };
    expect(dialectOf(storage.db)).toBe(storage.dialect);
    expect(dialectOf(storage.db.withPlugin(plugin))).toBe(storage.dialect);
    await storage.db.transaction().execute(async (trx) => { expect(dialectOf(trx)).toBe(storage.dialect); });
    const snapshot = await storage.openSnapshot();
    try {
      expect(dialectOf(snapshot.db).engine).toBe(engine);
    } finally {
      await snapshot.close();
    }
  });

  it('states what the engine can do', () => {
    const { supportsSkipLocked, supportsRowLocks, groupsCommits, readsSynchronously, streamsInBatches, numberedParameters } = storage.dialect;
    const flags = { supportsSkipLocked, supportsRowLocks, groupsCommits, readsSynchronously, streamsInBatches, numberedParameters };
    // SQLite: one in-process connection that answers synchronously; PostgreSQL: a pool shared with other processes.
    if (engine === 'sqlite') {
      expect(flags).toEqual({ supportsSkipLocked: false, supportsRowLocks: false, groupsCommits: true, readsSynchronously: true, streamsInBatches: false, numberedParameters: false });
    } else {
      expect(flags).toEqual({ supportsSkipLocked: true, supportsRowLocks: true, groupsCommits: false, readsSynchronously: false, streamsInBatches: true, numberedParameters: true });
    }
  });

  it("refreshes the planner's statistics where plans depend on them: the feed's page read becomes an index scan", async () => {
    const refresh = storage.dialect.refreshStatistics;
    if (engine === 'sqlite') {
      expect(refresh).toBeNull();
      return;
    }
    await addWorkspace(storage.db, 'ws_stats');
    const at = new Date().toISOString();
    await sql`insert into events (id, workspace_id, collection_id, type, created_at, data, seq)
      select 'evt_' || lpad(g::text, 26, '0'), 'ws_stats', 'col_1', 'record.created', ${at}, '{}', g from generate_series(1, 20000) g`.execute(storage.db);
    await refresh!('events').execute(storage.db);
    const plan = await sql<{ 'QUERY PLAN': string }>`explain select seq, data from events
      where workspace_id = 'ws_stats' and seq is not null and created_at >= '2000' and seq > 10000 order by seq limit 1000`.execute(storage.db);
    const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toMatch(/Index Scan/);
    expect(text).not.toMatch(/Sort/);
  });

  it('maps a broken unique constraint to CONFLICT where it happens, keeping the driver error as the cause', async () => {
    await addWorkspace(storage.db, 'wsp_same');
    const error = await addWorkspace(storage.db, 'wsp_same').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UniqueViolation);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'CONFLICT', status: 409, message: 'That already exists.' });
    expect((error as Error).cause).toMatchObject({ code: engine === 'sqlite' ? 'SQLITE_CONSTRAINT_PRIMARYKEY' : '23505' });
    expect(storage.dialect.isUniqueViolation(error)).toBe(true);
    expect(storage.dialect.isUniqueViolation((error as Error).cause)).toBe(true);
    // Inside a transaction, and through group commit, the same.
    await expect(storage.db.transaction().execute((trx) => addWorkspace(trx, 'wsp_same'))).rejects.toBeInstanceOf(UniqueViolation);
    await expect(writeTransaction(storage.db, (trx) => addWorkspace(trx, 'wsp_same'))).rejects.toBeInstanceOf(UniqueViolation);
  });

  it('leaves errors it does not know as they are (answered 500, never echoed)', async () => {
    const error = await sql`select * from no_such_table`.execute(storage.db).catch((caught: unknown) => caught);
    expect(error).not.toBeInstanceOf(AppError);
    expect(error).toBeInstanceOf(Error);
  });

  it('maps the engine\'s "cannot be reached" errors to UNAVAILABLE', () => {
    const driverErrors = engine === 'sqlite'
      ? [Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }), new TypeError('The database connection is not open')]
      : [Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })];
    for (const driverError of driverErrors) {
      const mapped = mapDriverError(storage.dialect, driverError);
      expect(mapped).toBeInstanceOf(DatabaseUnavailable);
      expect(mapped).toMatchObject({ code: 'UNAVAILABLE', status: 503, cause: driverError });
      expect(storage.dialect.isUnavailable(mapped)).toBe(true);
    }
    // The other engine's codes mean nothing here.
    const foreign = Object.assign(new Error('x'), { code: engine === 'sqlite' ? '23505' : 'SQLITE_CONSTRAINT_UNIQUE' });
    expect(mapDriverError(storage.dialect, foreign)).toBe(foreign);
  });

  it('maps errors on the direct path too', async () => {
    await addWorkspace(storage.db, 'wsp_1');
    expect(await workspaceById.run(storage.db, ['wsp_1'])).toEqual([{ id: 'wsp_1' }]);
    const insertTwice = directQuery<{ id: string }>('test_dialect_insert_twice', (parameter) =>
      `insert into workspaces (id, name, created_at) values (${parameter(1)}, ${parameter(1)}, '2026-01-01T00:00:00.000Z') returning id`);
    await expect(insertTwice.run(storage.db, ['wsp_1'])).rejects.toBeInstanceOf(UniqueViolation);
  });

  it('hears other processes\' notifications where the engine has them, and is silent where it has none', async () => {
    let heard = 0;
    const stop = storage.dialect.listen('plainbase_events', () => { heard += 1; });
    try {
      if (engine === 'sqlite') {
        expect(storage.dialect.notifyEvents).toBeNull();
        return;
      }
      // The listener connects in the background: notify until it hears (a NOTIFY is sent at commit).
      const deadline = Date.now() + 10_000;
      while (heard === 0 && Date.now() < deadline) {
        await storage.db.transaction().execute((trx) => storage.dialect.notifyEvents!.execute(trx));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(heard).toBeGreaterThan(0);
    } finally {
      stop();
    }
  });
});
