import type { CompiledQuery, Kysely, SqliteDatabase as KyselySqliteDatabase } from 'kysely';
import { engineOf } from './dialect.js';
import type { Executor } from './schema.js';

/**
 * Reads a query's rows one at a time and stops as soon as the caller has enough: for answers
 * bounded in bytes (a page of records, a chunk of an export), where reading every row the LIMIT
 * allows first could hold gigabytes of records in memory before the first was looked at.
 *
 * - SQLite: the statement's own iterator (better-sqlite3 `iterate`), run synchronously, with the
 *   connection held through Kysely's mutex like any query; stopping resets the statement, so no
 *   row after the last one wanted is read.
 * - PostgreSQL: a cursor (pg-cursor, through Kysely's `stream`), `batchRows` rows per round trip;
 *   stopping closes it.
 * - Elsewhere (a Kysely instance this module was not told about, such as a test's with plugins):
 *   the rows are read whole, as any query reads them.
 */

/** Return false to stop reading. */
export type RowVisitor<Row> = (row: Row) => boolean;

interface SqliteRows {
  statements: KyselySqliteDatabase;
  /** The executor has its connection to itself (a snapshot's transaction): no mutex to take. */
  exclusive: boolean;
}

const sqliteExecutors = new WeakMap<object, SqliteRows>();

/** Called by connect.ts for the main SQLite connection and for each snapshot's transaction. */
export function enableSqliteRowStream(executor: Executor, statements: KyselySqliteDatabase, exclusive: boolean): void {
  sqliteExecutors.set(executor, { statements, exclusive });
}

export async function visitRows<Row>(executor: Executor, query: CompiledQuery, batchRows: number, visit: RowVisitor<Row>): Promise<void> {
  const sqlite = sqliteExecutors.get(executor);
  if (sqlite) {
    const iterate = () => {
      for (const row of sqlite.statements.prepare(query.sql).iterate(query.parameters)) if (!visit(row as Row)) return;
    };
    if (sqlite.exclusive) return iterate();
    return (executor as Kysely<any>).connection().execute(async () => iterate());
  }
  if (engineOf(executor) === 'postgres') {
    for await (const { rows } of executor.getExecutor().stream<Row>(query, Math.max(1, Math.floor(batchRows)))) {
      for (const row of rows) if (!visit(row)) return;
    }
    return;
  }
  for (const row of (await executor.executeQuery<Row>(query)).rows) if (!visit(row)) return;
}
