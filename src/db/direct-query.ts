import type SqliteDatabase from 'better-sqlite3';
import { sql, type Kysely, type SqliteDatabase as KyselySqliteDatabase } from 'kysely';
import type pg from 'pg';
import { mapDriverError } from './db-errors.js';
import { dialectOf, type Dialect } from './dialect.js';
import { statementNameOf } from './prepared-statements.js';
import type { Executor } from './schema.js';

/**
 * A hand-written read that runs on every request (the API key lookup) and so skips Kysely's
 * per-query pipeline: no query tree, no compile, no connection mutex, no promise chain.
 * - SQLite: the statement from the shared statement cache (statement-cache.ts), run synchronously;
 *   `readNow` returns the rows themselves, so a caller on a hot path can stay synchronous too.
 * - PostgreSQL: `pool.query` with a named statement, which each pooled connection parses and
 *   plans once and then only executes.
 * Anything this cannot run directly goes through Kysely as before, with the same SQL and result:
 * a transaction (it must see its own writes and nothing uncommitted of anyone else's: on SQLite's
 * single connection a direct read during an open transaction would run inside it), a snapshot,
 * and a Kysely instance with plugins (test/keys.test.ts counts queries with one; plugins must
 * see every query).
 */
export interface DirectQuery<Row> {
  /** The rows. */
  run(db: Executor, parameters: readonly unknown[]): Promise<Row[]>;
  /**
   * The rows now, synchronously, where the connection answers so (Dialect.readsSynchronously) and
   * is free; otherwise null, and the caller uses `run`.
   */
  readNow(db: Executor, parameters: readonly unknown[]): Row[] | null;
}

/** The direct path of one connection (connect.ts): its dialect and how it runs a statement. */
interface DirectRunner {
  dialect: Dialect;
  /** The rows now, or null when they cannot be had synchronously at this moment (or on this engine). */
  readNow(text: string, values: readonly unknown[]): unknown[] | null;
  /** The rows later, or null when the direct path cannot run the read (Kysely runs it then). */
  read(name: string, text: string, values: readonly unknown[]): Promise<unknown[]> | null;
  /** The same within a time budget in milliseconds (PostgreSQL only), or null. */
  readWithin(name: string, text: string, values: readonly unknown[], ms: number): Promise<unknown[]> | null;
}

/** Only the Kysely instance each database connection was opened with; derived ones are absent. */
const runners = new WeakMap<Kysely<any>, DirectRunner>();

/** Marks the n-th parameter while a definition's text is cut into pieces; NUL never occurs in SQL. */
const MARKER = /\u0000(\d+)\u0000/;

/** A definition's SQL for one dialect: its text with that dialect's markers, and Kysely's template of it. */
interface DialectSql {
  text: string;
  template: TemplateStringsArray;
  /** The parameter (from 1) behind each marker, in order of appearance; one may appear more than once. */
  positions: number[];
}

/**
 * Defines a query by name (unique: PostgreSQL prepares it under that name) and its SQL, written
 * with `parameter(n)` for the n-th bound value (from 1), so that each engine gets its markers, and
 * with `dialect` for what else differs between the engines (db/dialect.ts).
 */
export function directQuery<Row>(name: string, text: (parameter: (position: number) => string, dialect: Dialect) => string): DirectQuery<Row> {
  const byDialect = new WeakMap<Dialect, DialectSql>();
  // The last one asked for: a process has one dialect, so the hot path skips the map.
  let last: { dialect: Dialect; sql: DialectSql } | null = null;
  const sqlFor = (dialect: Dialect): DialectSql => {
    if (last?.dialect === dialect) return last.sql;
    let written = byDialect.get(dialect);
    if (!written) {
      const pieces = text((position) => `\u0000${position}\u0000`, dialect).split(MARKER);
      const fragments = pieces.filter((_, index) => index % 2 === 0);
      const positions = pieces.filter((_, index) => index % 2 === 1).map(Number);
      written = {
        text: fragments.reduce((sqlText, fragment, index) => `${sqlText}${dialect.parameter(positions[index - 1]!)}${fragment}`),
        template: Object.assign([...fragments], { raw: fragments }) as TemplateStringsArray,
        positions,
      };
      byDialect.set(dialect, written);
    }
    last = { dialect, sql: written };
    return written;
  };
  const inOrder = (positions: number[], parameters: readonly unknown[]) => positions.map((position) => parameters[position - 1]);
  const values = (dialect: Dialect, written: DialectSql, parameters: readonly unknown[]) =>
    dialect.numberedParameters ? parameters : inOrder(written.positions, parameters);
  return {
    readNow(db, parameters) {
      const direct = runners.get(db as Kysely<any>);
      if (!direct?.dialect.readsSynchronously) return null;
      const written = sqlFor(direct.dialect);
      return direct.readNow(written.text, values(direct.dialect, written, parameters)) as Row[] | null;
    },
    run(db, parameters) {
      const direct = runners.get(db as Kysely<any>);
      if (direct) {
        const written = sqlFor(direct.dialect);
        const bound = values(direct.dialect, written, parameters);
        let now: unknown[] | null;
        try {
          now = direct.readNow(written.text, bound);
        } catch (error) {
          return Promise.reject(error);
        }
        if (now) return Promise.resolve(now as Row[]);
        const later = direct.read(name, written.text, bound);
        if (later) return later as Promise<Row[]>;
      }
      // Kysely's own path, built as its sql`` tag would be: plugins see it, markers are its own.
      const { template, positions } = sqlFor(direct?.dialect ?? dialectOf(db));
      return sql<Row>(template, ...inOrder(positions, parameters)).execute(db).then((result) => result.rows);
    },
  };
}

/**
 * A query's rows through a statement named by its text (prepared-statements.ts), on PostgreSQL;
 * null where the direct path cannot run it (SQLite, a transaction, a Kysely instance with
 * plugins), and the caller runs the query as usual.
 */
export function readPrepared(db: Executor, text: string, values: readonly unknown[]): Promise<unknown[]> | null {
  const direct = runners.get(db as Kysely<any>);
  // Named only where the dialect prepares such queries: SQLite's lists need no name worked out.
  if (!direct?.dialect.preparesRecordQueries) return null;
  return direct.read(statementNameOf(text), text, values);
}

/**
 * readPrepared within a time budget (row-stream.ts visitRows' timeLimitMs): on PostgreSQL one
 * pooled connection runs `begin; set local statement_timeout` (one round trip), the statement
 * named by its text, and the commit. Through Kysely the statement would run unnamed in its
 * transaction and be planned on every call, which for a filtered page cost PostgreSQL more than
 * running it. Null where the direct path cannot run it.
 */
export function readPreparedWithin(db: Executor, text: string, values: readonly unknown[], ms: number): Promise<unknown[]> | null {
  const direct = runners.get(db as Kysely<any>);
  if (!direct?.dialect.preparesRecordQueries) return null;
  return direct.readWithin(statementNameOf(text), text, values, ms);
}

/** Called once by connect.ts for the main SQLite connection and its statement cache. */
export function enableDirectSqlite(db: Kysely<any>, dialect: Dialect, connection: SqliteDatabase.Database, statements: KyselySqliteDatabase): void {
  runners.set(db, {
    dialect,
    readNow: (text, values) => {
      // Inside another caller's transaction (group commit holds one open across awaits): wait
      // for it through Kysely's mutex instead of reading its uncommitted writes.
      if (connection.inTransaction) return null;
      try {
        return statements.prepare(text).all(values as unknown[]) as unknown[];
      } catch (error) {
        // better-sqlite3's TypeError for a connection busy iterating a statement: Kysely's mutex
        // waits for the iteration to end. SQL errors are SqliteErrors, mapped as Kysely's are.
        if (error instanceof TypeError) return null;
        throw mapDriverError(dialect, error);
      }
    },
    read: () => null,
    readWithin: () => null,
  });
}

/**
 * Called once by connect.ts for the PostgreSQL pool. `named` false (behind a transaction-mode
 * pooler) sends every statement unnamed: a named one is prepared on the server session that ran
 * it, and the pooler may run the next call on another session, which does not know the name (or
 * knows it already, "prepared statement … already exists"). bench/named-statements.ts measures
 * what names earn on a direct connection, where they stay.
 */
export function enableDirectPostgres(db: Kysely<any>, dialect: Dialect, pool: pg.Pool, named = true): void {
  const statement = (name: string, text: string, values: readonly unknown[]) => (named ? { name, text, values: values as unknown[] } : { text, values: values as unknown[] });
  const mapped = (error: unknown) => mapDriverError(dialect, error);
  runners.set(db, {
    dialect,
    readNow: () => null,
    read: (name, text, values) => pool.query(statement(name, text, values)).then(
      (result) => result.rows as unknown[],
      (error: unknown) => {
        throw mapped(error);
      },
    ),
    readWithin: async (name, text, values, ms) => {
      const client = await pool.connect().catch((error: unknown) => {
        throw mapped(error);
      });
      let broken: Error | undefined;
      try {
        await client.query(dialect.beginWithStatementTimeout!(ms));
        const { rows } = await client.query(statement(name, text, values));
        await client.query('commit');
        return rows as unknown[];
      } catch (error) {
        // A connection that cannot even roll back is not given back to the pool.
        await client.query('rollback').catch((lost: Error) => (broken = lost));
        throw mapped(error);
      } finally {
        client.release(broken);
      }
    },
  });
}
