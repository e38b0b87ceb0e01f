import type SqliteDatabase from 'better-sqlite3';

/**
 * A time budget for one statement, on SQLite. better-sqlite3 runs a statement synchronously on the
 * event loop and offers neither a progress handler nor an interrupt that could be called while it
 * runs (nothing else runs meanwhile). So the statement checks its own clock: a budgeted statement
 * carries Dialect.statementBudgetCheck in its WHERE clause, which calls this function of the
 * connection now and then as rows are scanned, and the function throws once the budget is spent,
 * which ends the statement with that error.
 *
 * The check is `(random() & 63) <> 0 or plainbase_within_budget()`: the call into JavaScript costs
 * about 350 ns, as much as a filter on a data field, so it is made for one row in 64 on average
 * (measured over 200,000 rows: a filter on one data field took 430 ns a row with the check, 390
 * without). The chance that 1,000 rows pass without a check is about 1 in 6 million.
 */
export const SQLITE_BUDGET_FUNCTION = 'plainbase_within_budget';

/** What a budgeted SQLite statement throws when its budget is spent (Dialect.isStatementTimeout). */
export class SqliteBudgetSpent extends Error {
  constructor() {
    super('the statement ran past its time budget');
  }
}

/** The deadline of the statement running now on one SQLite connection. */
export interface SqliteStatementClock {
  /**
   * Runs `read` (which must run its statement synchronously, start to end) with a deadline `ms`
   * from now; statements run without one never stop.
   */
  within<T>(ms: number, read: () => T): T;
}

/** Registers the budget function on the connection; connect.ts calls it for every connection it opens. */
export function enableSqliteStatementBudget(connection: SqliteDatabase.Database): SqliteStatementClock {
  let deadline: number | null = null;
  connection.function(SQLITE_BUDGET_FUNCTION, { deterministic: false }, () => {
    if (deadline !== null && performance.now() > deadline) throw new SqliteBudgetSpent();
    return 1;
  });
  return {
    within(ms, read) {
      // Synchronous from here to the end of read(): no other statement can run on the connection meanwhile.
      deadline = performance.now() + ms;
      try {
        return read();
      } finally {
        deadline = null;
      }
    },
  };
}
