import type SqliteDatabase from 'better-sqlite3';
import type { SqliteDatabase as KyselySqliteDatabase } from 'kysely';
import { LruMap } from '../lru-map.js';

/** Distinct SQL texts kept prepared; query shapes are few, filters on many paths may add more. */
export const STATEMENT_CACHE_SIZE = 500;

/**
 * The database as Kysely's SQLite driver sees it, with prepared statements reused by SQL text.
 * The driver calls `prepare` for every query, and SQLite then parses and plans the statement
 * again each time (20–40 µs, where running a prepared one costs a few); Kysely's compiled SQL is
 * the same text for the same query shape, so the values change and the statement can stay.
 * The cache is an LRU of at most `capacity` statements. SQLite itself re-prepares a cached
 * statement when the schema changes (a new index), so reuse never runs a stale plan.
 */
export function withStatementCache(database: SqliteDatabase.Database, capacity = STATEMENT_CACHE_SIZE): KyselySqliteDatabase {
  const statements = new LruMap<string, SqliteDatabase.Statement>(capacity);
  return {
    close: () => database.close(),
    prepare: (sql: string) => {
      const cached = statements.get(sql);
      if (cached) return cached;
      // (A statement can never be wanted while it is still being iterated: better-sqlite3 allows
      // nothing else on a connection during an iteration, and Kysely holds the connection for it.)
      const statement = database.prepare(sql);
      statements.set(sql, statement);
      return statement;
    },
  };
}
