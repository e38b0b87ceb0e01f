import type SqliteDatabase from 'better-sqlite3';
import { sql, type Kysely, type SqliteDatabase as KyselySqliteDatabase } from 'kysely';
import type pg from 'pg';
import { dialectFor, engineOf, type Dialect, type Engine } from './dialect.js';
import type { Executor } from './schema.js';

/**
 * A hand-written read that runs on every request (the API key lookup) and so skips Kysely's
 * per-query pipeline: no query tree, no compile, no connection mutex, no promise chain.
 * - SQLite: the statement from the shared statement cache (statement-cache.ts), run synchronously;
 *   `run` returns the rows themselves, so the caller can stay synchronous too.
 * - PostgreSQL: `pool.query` with a named statement, which each pooled connection parses and
 *   plans once and then only executes.
 * Anything this cannot run directly goes through Kysely as before, with the same SQL and result:
 * a transaction (it must see its own writes and nothing uncommitted of anyone else's: on SQLite's
 * single connection a direct read during an open transaction would run inside it), a snapshot,
 * and a Kysely instance with plugins (test/keys.test.ts counts queries with one; plugins must
 * see every query).
 */
export interface DirectQuery<Row> {
  run(db: Executor, parameters: readonly unknown[]): Row[] | Promise<Row[]>;
}

type Runner = (name: string, text: string, parameters: readonly unknown[]) => unknown[] | Promise<unknown[]> | null;

/** Only the Kysely instance each database connection was opened with; derived ones are absent. */
const runners = new WeakMap<Kysely<any>, { engine: Engine; run: Runner }>();

/** Marks the n-th parameter while a definition's text is cut into pieces; NUL never occurs in SQL. */
const MARKER = /\u0000(\d+)\u0000/;

/** A definition's SQL for one engine: its text with that engine's markers, and Kysely's template of it. */
interface EngineSql {
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
  const forEngine = {} as Record<Engine, EngineSql>;
  for (const engine of ['sqlite', 'postgres'] as const) {
    const dialect = dialectFor(engine);
    const pieces = text((position) => `\u0000${position}\u0000`, dialect).split(MARKER);
    const fragments = pieces.filter((_, index) => index % 2 === 0);
    const positions = pieces.filter((_, index) => index % 2 === 1).map(Number);
    forEngine[engine] = {
      text: fragments.reduce((sqlText, fragment, index) => `${sqlText}${dialect.parameter(positions[index - 1]!)}${fragment}`),
      template: Object.assign([...fragments], { raw: fragments }) as TemplateStringsArray,
      positions,
    };
  }
  return {
    run(db, parameters) {
      const direct = runners.get(db as Kysely<any>);
      const { text: sqlText, template, positions } = forEngine[direct?.engine ?? engineOf(db)];
      const inOrder = () => positions.map((position) => parameters[position - 1]);
      if (direct) {
        const rows = direct.run(name, sqlText, direct.engine === 'sqlite' ? inOrder() : parameters);
        if (rows) return rows as Row[];
      }
      // Kysely's own path, built as its sql`` tag would be: plugins see it, markers are its own.
      return sql<Row>(template, ...inOrder()).execute(db).then((result) => result.rows);
    },
  };
}

/** Called once by connect.ts for the main SQLite connection and its statement cache. */
export function enableDirectSqlite(db: Kysely<any>, connection: SqliteDatabase.Database, statements: KyselySqliteDatabase): void {
  runners.set(db, {
    engine: 'sqlite',
    run: (_name, text, parameters) => {
      // Inside another caller's transaction (group commit holds one open across awaits): wait
      // for it through Kysely's mutex instead of reading its uncommitted writes.
      if (connection.inTransaction) return null;
      try {
        return statements.prepare(text).all(parameters as unknown[]) as unknown[];
      } catch (error) {
        // better-sqlite3's TypeError for a connection busy iterating a statement: Kysely's mutex
        // waits for the iteration to end. SQL errors are SqliteErrors and are thrown as they are.
        if (error instanceof TypeError) return null;
        throw error;
      }
    },
  });
}

/** Called once by connect.ts for the PostgreSQL pool. */
export function enableDirectPostgres(db: Kysely<any>, pool: pg.Pool): void {
  runners.set(db, {
    engine: 'postgres',
    run: (name, text, parameters) => pool.query({ name, text, values: parameters as unknown[] }).then((result) => result.rows as unknown[]),
  });
}
