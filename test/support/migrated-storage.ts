import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { connectStorage, type Storage } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';

/**
 * Databases already at the latest migration, made without running the migrations for every test
 * (the migrations were most of a test's setup: about 0.2 s on SQLite, 1.5 to 2 s on PostgreSQL
 * on the shared two-core machine, for about a thousand setups a run).
 *
 * SQLite: the migrations run once per test process into a template file; each database is a copy
 * of it. PostgreSQL: the first schema of a process is migrated; a closed schema that still has
 * exactly the migrated shape (same tables, columns, indexes, constraints, migration rows) is
 * emptied (its rows deleted, its planner statistics forgotten) and handed to the next test.
 * Creating the tables costs PostgreSQL about as much as migrating (a replayed dump of the schema
 * took as long; CREATE DATABASE ... TEMPLATE 0.3 s with STRATEGY wal_log, 0.7 s with file_copy,
 * plus about 1 s to drop either), emptying them tens of milliseconds. A schema a test changed (a
 * collection index, a migration taken back) is dropped instead.
 * test/migrated-storage.test.ts checks that both kinds equal a freshly migrated database;
 * test/migrations.test.ts still migrates from empty.
 */
export type MigratedStorage = Storage & { url: string; schema?: string };

export function sqliteStorageAt(file: string, connected: Storage): MigratedStorage {
  return {
    ...connected,
    url: `sqlite:${file}`,
    close: async () => {
      await connected.close();
      for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
    },
  };
}

export function tempSqliteFile(): string {
  return path.join(os.tmpdir(), `plainbase-test-${randomBytes(6).toString('hex')}.db`);
}

let sqliteTemplate: Promise<string> | undefined;

/** The template file of this process: migrated once, removed when the process exits. */
export function sqliteTemplateFile(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const file = tempSqliteFile();
    process.once('exit', () => {
      for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
    });
    const storage = await connectStorage({ engine: 'sqlite', file });
    try {
      await migrateToLatest(storage.db);
    } finally {
      // Closing the last connection folds the write-ahead log into the file, so the file alone is the database.
      await storage.close();
    }
    return file;
  })();
  return sqliteTemplate;
}

export async function migratedSqlite(): Promise<MigratedStorage> {
  const file = tempSqliteFile();
  fs.copyFileSync(await sqliteTemplateFile(), file);
  return sqliteStorageAt(file, await connectStorage({ engine: 'sqlite', file }));
}

export async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}


/**
 * What a schema is made of, as text without the schema's name: relations, columns with types and
 * defaults, indexes, constraints, triggers, functions, and the migrations it records. Two schemas
 * with the same text have the same shape.
 */
export async function postgresShape(client: pg.Client, schema: string): Promise<string> {
  const { rows } = await client.query<{ line: string }>(
    `select line from (
       select 'relation ' || c.relname || ' ' || c.relkind::text as line from pg_class c where c.relnamespace = $1::regnamespace
       union all
       select 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' not null ' || a.attnotnull::text
              || ' default ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '-') || ' identity ' || a.attidentity::text || ' generated ' || a.attgenerated::text
         from pg_attribute a join pg_class c on c.oid = a.attrelid left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
        where c.relnamespace = $1::regnamespace and c.relkind in ('r', 'p', 'v', 'm') and a.attnum > 0 and not a.attisdropped
       union all
       select 'index ' || pg_get_indexdef(i.indexrelid) from pg_index i join pg_class c on c.oid = i.indexrelid where c.relnamespace = $1::regnamespace
       union all
       select 'constraint ' || t.relname || '.' || k.conname || ' ' || pg_get_constraintdef(k.oid)
         from pg_constraint k join pg_class t on t.oid = k.conrelid where k.connamespace = $1::regnamespace
       union all
       select 'trigger ' || pg_get_triggerdef(g.oid) || ' enabled ' || g.tgenabled::text from pg_trigger g join pg_class c on c.oid = g.tgrelid where c.relnamespace = $1::regnamespace and not g.tgisinternal
       union all
       select 'function ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') ' || md5(p.prosrc) from pg_proc p where p.pronamespace = $1::regnamespace
     ) shape order by line`,
    [schema],
  );
  const migrations = await client.query<{ name: string }>(`select name from ${schema}.plainbase_migrations order by name`);
  const lock = await client.query<{ is_locked: number }>(`select is_locked from ${schema}.plainbase_migrations_lock`);
  return [...rows.map((row) => row.line), ...migrations.rows.map((row) => `migrated ${row.name}`), `locked ${JSON.stringify(lock.rows)}`]
    .join('\n')
    .replaceAll(`${schema}.`, '');
}

/** Schemas of this process at the latest migration, emptied, waiting for the next test. */
const idleSchemas: string[] = [];
/** Each migrated schema's signature right after its migrations (see below). */
const migratedSignatures = new Map<string, string>();
/** Each migrated schema's planner counts right after its migrations, as rows of a VALUES list. */
const migratedCounts = new Map<string, string>();
/** Each migrated schema's triggers right after its migrations: whether each runs (a test may switch one, as the search triggers are). */
const migratedTriggers = new Map<string, TriggerState[]>();
interface TriggerState {
  relname: string;
  tgname: string;
  tgenabled: string;
}
const triggerStates = async (client: pg.Client, schema: string) =>
  (
    await client.query<TriggerState>(
      `select c.relname, g.tgname, g.tgenabled from pg_trigger g join pg_class c on c.oid = g.tgrelid where c.relnamespace = $1::regnamespace and not g.tgisinternal order by 1, 2`,
      [schema],
    )
  ).rows;

export async function migratedPostgres(url: string, newSchemaName: () => string): Promise<MigratedStorage> {
  let schema = idleSchemas.pop();
  let storage: Storage;
  if (schema) {
    storage = await connectStorage({ engine: 'postgres', url }, { schema, poolSize: 5 });
  } else {
    schema = newSchemaName();
    const created = schema;
    await withAdmin(url, (client) => client.query(`create schema ${created}`));
    storage = await connectStorage({ engine: 'postgres', url }, { schema, poolSize: 5 });
    try {
      await migrateToLatest(storage.db);
      await withAdmin(url, async (client) => {
        migratedSignatures.set(created, (await signatureOf(client, created)).signature);
        const { rows } = await client.query<{ line: string }>(`select format('(%s, %s, %s::real, %s)', oid, relpages, reltuples, relallvisible) as line from pg_class where relnamespace = $1::regnamespace`, [created]);
        migratedCounts.set(created, rows.map((row) => row.line).join(', '));
        migratedTriggers.set(created, await triggerStates(client, created));
      });
    } catch (error) {
      await storage.close();
      await withAdmin(url, (client) => client.query(`drop schema if exists ${created} cascade`));
      throw error;
    }
  }
  const own = schema;
  // Once only: a test that closes twice must not hand its schema to two later tests at once.
  let closed: Promise<void> | null = null;
  const close = async () => {
    await storage.close();
    await withAdmin(url, async (client) => {
      if (await emptied(client, own)) idleSchemas.push(own);
      else {
        migratedSignatures.delete(own);
        migratedCounts.delete(own);
        migratedTriggers.delete(own);
        await client.query(`drop schema if exists ${own} cascade`);
      }
    });
  };
  return {
    ...storage,
    url,
    schema: own,
    close: () => (closed ??= close()),
  };
}

/**
 * A cheap fingerprint of a schema in one round trip: its relations, columns, defaults,
 * constraints, triggers and functions by object id (anything dropped and made again has new ids),
 * and the migrations it records; with its tables' names.
 */
async function signatureOf(client: pg.Client, schema: string): Promise<{ signature: string; tables: string[] }> {
  const { rows } = await client.query<{ signature: string; tables: string }>(
    `with rel as (select oid, relname, relkind from pg_class where relnamespace = $1::regnamespace)
     select md5(string_agg(item, ',' order by item)) as signature,
            (select string_agg(relname, ',') from rel where relkind in ('r', 'p')) as tables
       from (
         select 'c' || oid || relname || relkind::text as item from rel
         union all select 'a' || attrelid || attname || atttypid || atttypmod || attnotnull::text || attisdropped::text from pg_attribute where attrelid in (select oid from rel)
         union all select 'd' || adrelid || adnum || md5(adbin::text) from pg_attrdef where adrelid in (select oid from rel)
         union all select 'k' || oid from pg_constraint where connamespace = $1::regnamespace
         union all select 't' || oid from pg_trigger where tgrelid in (select oid from rel)
         union all select 'p' || oid || md5(prosrc) from pg_proc where pronamespace = $1::regnamespace
         union all select 'm' || name from ${schema}.plainbase_migrations
         union all select 'l' || id || is_locked from ${schema}.plainbase_migrations_lock
       ) items`,
    [schema],
  );
  return { signature: rows[0]!.signature, tables: rows[0]!.tables.split(',') };
}

/**
 * Empties a schema for the next test when it still has its migrated shape: every row deleted but
 * the migrator's, and what a test's ANALYZE (or autovacuum) left for the planner forgotten.
 * False when it cannot be reused. DELETE, not TRUNCATE: truncating the 26 tables took about 1 s
 * (new files for every table and index), deleting their rows 40 ms. What a reused schema does not
 * share with a new one is the dead rows' pages, which only the planner's row estimates see: the
 * tests about plans make their databases with freshStorage and the migrations.
 * One statement list, one round trip.
 */
async function emptied(client: pg.Client, schema: string): Promise<boolean> {
  try {
    const { signature, tables } = await signatureOf(client, schema);
    if (signature !== migratedSignatures.get(schema)) return false;
    const now = await triggerStates(client, schema);
    const switched = (migratedTriggers.get(schema) ?? []).filter((migrated, i) => now[i]?.tgenabled !== migrated.tgenabled);
    const script = [
      'begin',
      // A connection a test left open must not stall the suite: give up and drop the schema instead.
      `set local lock_timeout = '2s'`,
      // Foreign keys are triggers: off for this transaction, so that the tables empty in any order.
      `set local session_replication_role = replica`,
      ...tables.filter((table) => !MIGRATOR_TABLES.includes(table)).map((table) => `delete from ${schema}.${table}`),
      ...switched.map((trigger) => `alter table ${schema}.${trigger.relname} ${trigger.tgenabled === 'D' ? 'disable' : 'enable'} trigger ${trigger.tgname}`),
      `delete from pg_statistic where starelid in (select oid from pg_class where relnamespace = '${schema}'::regnamespace)`,
      `delete from pg_statistic_ext_data where stxoid in (select oid from pg_statistic_ext where stxnamespace = '${schema}'::regnamespace)`,
      // The sizes the planner reads without looking, as the migrations left them (ANALYZE and VACUUM change them).
      `update pg_class c set relpages = v.pages, reltuples = v.tuples, relallvisible = v.visible
         from (values ${migratedCounts.get(schema)}) v (oid, pages, tuples, visible)
        where c.oid = v.oid and (c.relpages, c.reltuples, c.relallvisible) is distinct from (v.pages, v.tuples, v.visible)`,
      'commit',
    ];
    await client.query(script.join(';\n'));
    return true;
  } catch {
    await client.query('rollback').catch(() => undefined);
    return false;
  }
}

/** Kysely's migrator's tables: their rows are the migrated state. */
const MIGRATOR_TABLES = ['plainbase_migrations', 'plainbase_migrations_lock'];

/** Drops this process's idle schemas (at the end of a file run in a process of its own, or of the run). */
export async function dropIdleSchemas(url: string): Promise<void> {
  const schemas = idleSchemas.splice(0);
  if (schemas.length === 0) return;
  await withAdmin(url, async (client) => {
    for (const schema of schemas) await client.query(`drop schema if exists ${schema} cascade`);
  });
}
