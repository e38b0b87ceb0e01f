import fs from 'node:fs';
import path from 'node:path';
import type SqliteDatabase from 'better-sqlite3';
import { Kysely, sql, SqliteDialect } from 'kysely';
import type { Config } from '../config.js';
import { ConfigError, redactDatabaseUrl } from '../config.js';
import type { Dialect } from './dialect.js';
import { withPlainbaseDialect } from './kysely-dialect.js';
import { enableChangeWatch, TableWriteCounter } from './change-watch.js';
import { postgresDialect } from './postgres-dialect.js';
import { postgresKyselyDialect } from './postgres-driver.js';
import { CONNECTION_LIFETIME_SECONDS, statementCappedClient } from './prepared-statements.js';
import { sqliteDialect } from './sqlite-dialect.js';
import { enableDirectPostgres, enableDirectSqlite } from './direct-query.js';
import { checkConnectionPaths } from './listen-probe.js';
import { pingDatabase } from './ping.js';
import { enableSqliteRowStream } from './row-stream.js';
import { enableSqliteStatementBudget } from './statement-budget.js';
import { enableSqliteTimeBuckets } from './time-buckets.js';
import { withStatementCache } from './statement-cache.js';
import type { Db, Executor } from './schema.js';

export interface Storage {
  db: Db;
  dialect: Dialect;
  /** A read-only view of the database as it is now, kept until closed (see Snapshot). */
  openSnapshot(): Promise<Snapshot>;
  /**
   * A connection fit for migrations and their lock (migrate.ts, migrateStorage): `db` itself,
   * except behind a pooler, where it is a one-off connection to PLAINBASE_DATABASE_DIRECT_URL.
   * Close it when done (closing `db` itself that way is a no-op).
   */
  openMigrationConnection(): Promise<{ db: Db; close(): Promise<void> }>;
  close(): Promise<void>;
}

/**
 * A consistent, read-only view for long reads (exports): every query through `db` sees the
 * database as it was when the snapshot opened, whatever commits meanwhile. Close it when done;
 * closing twice is harmless.
 */
export interface Snapshot {
  db: Executor;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** PostgreSQL only: the schema to work in (tests give each run its own). */
  schema?: string;
  poolSize?: number;
  /**
   * PostgreSQL only: whether writing events wakes the delivery workers of other processes
   * (NOTIFY; true by default). A process that runs its own worker wakes it in-process, and that
   * worker fans out every event this process writes, so its writes need not wake anyone else:
   * NOTIFY costs each writing transaction a queue entry and a lock at commit.
   */
  wakesOtherWorkers?: boolean;
  /**
   * PostgreSQL only: check the connection paths before use (listen-probe.ts): a transaction-mode
   * pooler without a direct URL, or a direct URL that is a pooler or another database, is
   * refused. For starts (serve, the CLI); tests that open many connections skip it.
   */
  checkPooler?: boolean;
}

/**
 * Opens the configured database and proves it answers. Failures become a ConfigError naming the
 * variable to fix, because at start that is what the person needs to know.
 */
export async function connectStorage(database: Config['database'], options: ConnectOptions = {}): Promise<Storage> {
  if (database.engine === 'postgres' && options.checkPooler) {
    try {
      await checkConnectionPaths(database.url, database.directUrl, { options: schemaOptions(options.schema) });
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError('PLAINBASE_DATABASE_URL', `cannot use the database at ${redactDatabaseUrl(database.url)}: ${(error as Error).message}`);
    }
  }
  const storage = database.engine === 'sqlite' ? await openSqlite(database.file) : await openPostgres(database.url, database.directUrl, options);
  try {
    await pingDatabase(storage);
  } catch (error) {
    await storage.close().catch(() => undefined);
    const where = database.engine === 'sqlite' ? database.file : redactDatabaseUrl(database.url);
    const variable = database.engine === 'sqlite' ? 'PLAINBASE_DATA_DIR' : 'PLAINBASE_DATABASE_URL';
    throw new ConfigError(variable, `cannot use the database at ${where}: ${(error as Error).message}`);
  }
  return storage;
}

/** The driver of the engine in use only: the other one's module costs memory and start time for nothing. */
const loadSqlite = async () => (await import('better-sqlite3')).default;
const loadPg = async () => (await import('pg')).default;
const loadCursor = async () => (await import('pg-cursor')).default;

async function openSqlite(file: string): Promise<Storage> {
  const SqliteDatabase = await loadSqlite();
  let connection: SqliteDatabase.Database;
  try {
    if (file !== ':memory:') {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      fs.accessSync(path.dirname(file), fs.constants.W_OK);
      // Created readable by this user only; SQLite gives its -wal and -shm files the same mode.
      fs.closeSync(fs.openSync(file, 'a', 0o600));
    }
    connection = new SqliteDatabase(file);
  } catch (error) {
    throw new ConfigError('PLAINBASE_DATA_DIR', `cannot write the database file ${file}: ${(error as Error).message}`);
  }
  // WAL lets readers proceed during a write. synchronous=NORMAL in WAL mode keeps every committed
  // transaction through a crash or kill of the process; only a power cut can lose the last few
  // (docs/durability.md).
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = NORMAL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  enableSqliteTimeBuckets(connection);
  const statements = withStatementCache(connection);
  // Counts writes to the tables in-process caches copy from (change-watch.ts).
  const writes = new TableWriteCounter();
  const db: Db = new Kysely({ dialect: withPlainbaseDialect(new SqliteDialect({ database: statements }), sqliteDialect), plugins: [writes] });
  enableDirectSqlite(db, sqliteDialect, connection, statements);
  const dataVersion = connection.prepare('pragma data_version').pluck();
  enableChangeWatch(db, writes, () => dataVersion.get() as number);
  enableSqliteRowStream(db, statements, false, enableSqliteStatementBudget(connection));
  return { db, dialect: sqliteDialect, openSnapshot: () => openSqliteSnapshot(file), openMigrationConnection: async () => ({ db, close: async () => undefined }), close: () => db.destroy() };
}

/**
 * SQLite's Kysely driver has one connection, and holding it for a long read would stall every
 * other request; so a snapshot opens its own read-only connection to the same file, where WAL
 * gives its transaction a stable view while the main connection keeps writing.
 */
async function openSqliteSnapshot(file: string): Promise<Snapshot> {
  if (file === ':memory:') throw new Error('a snapshot needs a database file; an in-memory SQLite cannot be opened twice');
  const SqliteDatabase = await loadSqlite();
  const connection = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  connection.pragma('busy_timeout = 5000');
  enableSqliteTimeBuckets(connection);
  const statements = withStatementCache(connection);
  const reader: Db = new Kysely({ dialect: withPlainbaseDialect(new SqliteDialect({ database: statements }), sqliteDialect) });
  try {
    const trx = await reader.startTransaction().execute();
    // The transaction has this connection to itself: its rows can be read one by one directly.
    enableSqliteRowStream(trx, statements, true, enableSqliteStatementBudget(connection));
    // A deferred BEGIN takes its view at the first read, so read now: the view is of this moment.
    await sql`select count(*) from sqlite_master`.execute(trx);
    return { db: trx, close: closeOnce(() => trx.rollback().execute(), () => reader.destroy()) };
  } catch (error) {
    await reader.destroy();
    throw error;
  }
}

const INT8 = 20;
const JSONB = 3802;

/** A test's schema as startup options (see below); a pooler would refuse them, so tests behind one use a database of their own. */
const schemaOptions = (schema: string | undefined) => (schema ? `-c search_path=${schema} -c max_parallel_workers_per_gather=0` : undefined);

/**
 * `directUrl` set means `url` may be a transaction-mode pooler, where consecutive statements of
 * one pooled client may run on different server sessions: the pool then sends only what needs no
 * session (no named statements: a name prepared on one server session is unknown on the next, or
 * already taken there), and LISTEN and migrations go to the direct URL.
 */
async function openPostgres(url: string, directUrl: string | undefined, options: ConnectOptions): Promise<Storage> {
  const pg = await loadPg();
  const pooled = directUrl !== undefined;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 5000,
    // Record queries are prepared per connection, a bounded number each (prepared-statements.ts);
    // a connection retired now and then gives up the ones its callers no longer send.
    Client: statementCappedClient(pg.Client),
    maxLifetimeSeconds: CONNECTION_LIFETIME_SECONDS,
    // A schema of its own is for tests, which make and drop many at once: PostgreSQL 15's parallel
    // workers have been seen failing to find such a schema ("does not exist", in a parallel
    // worker), so those connections plan without them.
    options: schemaOptions(options.schema),
    // Counts come back as int8; they always fit a JS number here. jsonb comes back as its text:
    // most reads only pass record data through to an answer (Dialect.jsonText), and parsing it
    // to write it out again cost each record two passes.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8 ? (value: string) => Number(value) : oid === JSONB ? (value: string) => value : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client losing its connection must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  // LISTEN needs a session of its own, which only a direct connection gives.
  const dialect = postgresDialect(directUrl ?? url, options.wakesOtherWorkers ?? true);
  // The cursor lets a read take its rows a batch at a time (row-stream.ts).
  const db: Db = new Kysely({ dialect: withPlainbaseDialect(postgresKyselyDialect(pool, await loadCursor()), dialect) });
  enableDirectPostgres(db, dialect, pool, !pooled);
  const openMigrationConnection = async () => {
    if (!pooled) return { db, close: async () => undefined };
    // One connection for the run: Kysely's migration lock and the DDL need one session throughout.
    const direct = await openPostgres(directUrl, undefined, { schema: options.schema, poolSize: 1, wakesOtherWorkers: false });
    return { db: direct.db, close: () => direct.close() };
  };
  return { db, dialect, openSnapshot: () => openPostgresSnapshot(db), openMigrationConnection, close: () => db.destroy() };
}

/** A repeatable-read, read-only transaction on a pooled connection, held until closed. */
async function openPostgresSnapshot(db: Db): Promise<Snapshot> {
  const trx = await db.startTransaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute();
  try {
    // PostgreSQL takes the snapshot at the first statement after BEGIN, not at BEGIN itself.
    await sql`select 1`.execute(trx);
  } catch (error) {
    await trx.rollback().execute().catch(() => undefined);
    throw error;
  }
  // Rollback, not commit: there is nothing to keep, and Kysely releases the connection even when a
  // rollback fails (a failed commit would keep it out of the pool).
  return { db: trx, close: closeOnce(() => trx.rollback().execute()) };
}

/** Runs the steps once, in order, whatever fails: a broken read connection must still be released. */
function closeOnce(...steps: (() => Promise<unknown>)[]): () => Promise<void> {
  let closing: Promise<void> | null = null;
  return () => {
    closing ??= (async () => {
      for (const step of steps) await step().catch(() => undefined);
    })();
    return closing;
  };
}
