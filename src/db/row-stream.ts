import { sql, type CompiledQuery, type Kysely, type SqliteDatabase as KyselySqliteDatabase } from 'kysely';
import { mapDriverError } from './db-errors.js';
import { readPrepared, readPreparedWithin } from './direct-query.js';
import { dialectOf } from './dialect.js';
import type { Executor } from './schema.js';
import type { SqliteStatementClock } from './statement-budget.js';

/**
 * Reads a query's rows a batch at a time and stops as soon as the caller has enough: for answers
 * bounded in bytes (a page of records, a chunk of an export), where reading every row the LIMIT
 * allows first could hold gigabytes of records in memory before the first was looked at.
 *
 * `batchRows` is how many rows may be held at once (the caller sizes it from the largest a row
 * can be); `maxRows` is the query's own LIMIT.
 * - SQLite: all of them in one call when `maxRows` fits in a batch (the fastest way to read a
 *   small page); otherwise one row at a time, through the statement's iterator, run
 *   synchronously; stopping resets the statement, so no row after the last one wanted is read.
 *   The connection is held through Kysely's mutex like any query's.
 * - PostgreSQL: likewise in one query when `maxRows` fits in a batch (a prepared one when the
 *   text repeats, RowBatches.repeats); otherwise a cursor
 *   (pg-cursor, through Kysely's `stream`), `batchRows` per round trip; stopping closes it.
 * - Elsewhere (a Kysely instance this module was not told about, such as a test's with plugins,
 *   or a single batch on PostgreSQL): the rows are read whole, as any query reads them.
 */

export interface RowBatches {
  batchRows: number;
  maxRows: number;
  /**
   * The query's text repeats from call to call: on PostgreSQL a read in one batch runs it as a
   * statement named by its text (prepared-statements.ts), planned once per connection.
   */
  repeats?: boolean;
  /**
   * The statement's time budget in milliseconds: past it the read fails with StatementTimedOut
   * (db-errors.ts). PostgreSQL: statement_timeout, set local to a transaction the read runs in
   * (the caller's, or one of its own). SQLite: the statement must carry
   * Dialect.statementBudgetCheck, which stops it (statement-budget.ts).
   */
  timeLimitMs?: number;
}

/** Return false to stop reading. */
export type RowVisitor<Row> = (row: Row) => boolean;

interface SqliteRows {
  statements: KyselySqliteDatabase;
  /** The executor has its connection to itself (a snapshot's transaction): no mutex to take. */
  exclusive: boolean;
  clock: SqliteStatementClock;
}

const sqliteExecutors = new WeakMap<object, SqliteRows>();

/** Called by connect.ts for the main SQLite connection and for each snapshot's transaction. */
export function enableSqliteRowStream(executor: Executor, statements: KyselySqliteDatabase, exclusive: boolean, clock: SqliteStatementClock): void {
  sqliteExecutors.set(executor, { statements, exclusive, clock });
}

export async function visitRows<Row>(executor: Executor, query: CompiledQuery, batches: RowBatches, visit: RowVisitor<Row>): Promise<void> {
  const batchRows = Math.max(1, Math.floor(batches.batchRows));
  const limit = batches.timeLimitMs;
  const sqlite = sqliteExecutors.get(executor);
  if (sqlite) {
    const untimed = () => {
      try {
        const statement = sqlite.statements.prepare(query.sql);
        const rows = batches.maxRows <= batchRows ? statement.all(query.parameters) : statement.iterate(query.parameters);
        for (const row of rows) if (!visit(row as Row)) return;
      } catch (error) {
        // The driver's errors become the app's (db-errors.ts), as on Kysely's path; others pass as they are.
        throw mapDriverError(dialectOf(executor), error);
      }
    };
    const read = limit === undefined ? untimed : () => sqlite.clock.within(limit, untimed);
    if (sqlite.exclusive) return read();
    return (executor as Kysely<any>).connection().execute(async () => read());
  }
  const timeout = limit === undefined ? null : dialectOf(executor).statementTimeout;
  if (timeout && limit !== undefined) {
    // SET LOCAL lasts until the transaction ends: the caller's, or one held for this read alone.
    if (executor.isTransaction) {
      await timeout(limit).execute(executor);
      return visitDatabaseRows(executor, query, batches, batchRows, visit);
    }
    const direct = batches.repeats && batches.maxRows <= batchRows ? readPreparedWithin(executor, query.sql, query.parameters, limit) : null;
    if (direct) {
      for (const row of (await direct) as Row[]) if (!visit(row)) return;
      return;
    }
    // A transaction of its own, begun with the setting in one round trip instead of two.
    const begin = dialectOf(executor).beginWithStatementTimeout!;
    return (executor as Kysely<any>).connection().execute(async (connection) => {
      await sql.raw(begin(limit)).execute(connection);
      try {
        await visitDatabaseRows(connection, query, batches, batchRows, visit);
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw error;
      }
      await sql`commit`.execute(connection);
    });
  }
  return visitDatabaseRows(executor, query, batches, batchRows, visit);
}

/** Rows through Kysely: a cursor where the engine reads in batches, else the whole result. */
async function visitDatabaseRows<Row>(executor: Executor, query: CompiledQuery, batches: RowBatches, batchRows: number, visit: RowVisitor<Row>): Promise<void> {
  if (batches.maxRows > batchRows && dialectOf(executor).streamsInBatches) {
    for await (const { rows } of executor.getExecutor().stream<Row>(query, batchRows)) {
      for (const row of rows) if (!visit(row)) return;
    }
    return;
  }
  const rows = (batches.repeats ? await readPrepared(executor, query.sql, query.parameters) : null) ?? (await executor.executeQuery<Row>(query)).rows;
  for (const row of rows as Row[]) if (!visit(row)) return;
}
