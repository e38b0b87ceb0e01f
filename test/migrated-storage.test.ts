import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.js';
import { signedInOwner } from './support/client.js';
import { describeEachEngine, freshStorage, migratedStorage, startTestApp } from './support/harness.js';
import { postgresShape, withAdmin, type MigratedStorage } from './support/migrated-storage.js';

/**
 * The tests' databases come from a migrated template (SQLite) or a reused, emptied schema
 * (PostgreSQL) instead of running the migrations each time: such a database must be the one the
 * migrations make, empty, with nothing left of the test before.
 */
async function shape(storage: MigratedStorage): Promise<string> {
  if (storage.schema) return withAdmin(storage.url, (client) => postgresShape(client, storage.schema!));
  const objects = await sql<{ line: string }>`select type || ' ' || name || ' ' || tbl_name || ' ' || coalesce(sql, '') as line from sqlite_master order by type, name`.execute(storage.db);
  const migrations = await sql<{ name: string }>`select name from plainbase_migrations order by name`.execute(storage.db);
  return [...objects.rows.map((row) => row.line), ...migrations.rows.map((row) => `migrated ${row.name}`)].join('\n');
}

async function rowCounts(storage: MigratedStorage): Promise<Record<string, number>> {
  const tables = storage.schema
    ? (await sql<{ name: string }>`select relname as name from pg_class where relnamespace = current_schema()::regnamespace and relkind = 'r'`.execute(storage.db)).rows
    : (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(storage.db)).rows;
  const counts: Record<string, number> = {};
  for (const { name } of tables) counts[name] = Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(name)}`.execute(storage.db)).rows[0]!.n);
  return counts;
}

/** What the planner knows of each relation's size without looking: a new one's are never counted. */
async function plannerCounts(storage: MigratedStorage): Promise<Record<string, string>> {
  const { rows } = await sql<{ relname: string; counts: string }>`select relname, relpages || ' ' || reltuples || ' ' || relallvisible as counts from pg_class where relnamespace = current_schema()::regnamespace`.execute(storage.db);
  return Object.fromEntries(rows.map((row) => [row.relname, row.counts]));
}

describeEachEngine('a database from the migrated template', (engine) => {
  const open: MigratedStorage[] = [];
  afterEach(async () => {
    for (const storage of open.splice(0)) await storage.close();
  });

  it('equals one migrated from empty: the same tables, columns, indexes and migration rows, and no rows of a test before', async () => {
    const migrated = await freshStorage(engine);
    open.push(migrated);
    await migrateToLatest(migrated.db);
    const migratedCounts = engine === 'postgres' ? await plannerCounts(migrated) : {};

    // A test before it: a person, a collection, a record, and on PostgreSQL planner statistics.
    const before = await startTestApp(engine);
    const owner = await signedInOwner(before);
    expect((await owner.post('/v1/collections', { name: 'notes' })).status).toBe(201);
    expect((await owner.post('/v1/collections/notes/records', { data: { text: 'left behind' } })).status).toBe(201);
    if (engine === 'postgres') {
      const tables = await sql<{ name: string }>`select relname as name from pg_class where relnamespace = current_schema()::regnamespace and relkind = 'r'`.execute(before.storage.db);
      for (const { name } of tables.rows) await sql`analyze ${sql.table(name)}`.execute(before.storage.db);
    }
    const usedSchema = (before.storage as MigratedStorage).schema;
    await before.close();

    const made = await migratedStorage(engine);
    open.push(made);
    if (engine === 'postgres') {
      // The schema the test before used, emptied: what this test is about.
      expect(made.schema).toBe(usedSchema);
      const { rows } = await sql<{ stats: number }>`
        select count(*)::int as stats from pg_statistic s join pg_class c on c.oid = s.starelid where c.relnamespace = current_schema()::regnamespace`.execute(made.db);
      expect(rows[0]).toEqual({ stats: 0 });
      expect(await plannerCounts(made)).toEqual(migratedCounts);
    }
    expect(await shape(made)).toBe(await shape(migrated));
    expect(await rowCounts(made)).toEqual(await rowCounts(migrated));
    expect(Object.keys(await rowCounts(made)).length).toBeGreaterThan(10);
  });
});
