import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Storage } from '../src/db/connect.js';
import { isStatementTimedOut } from '../src/db/db-errors.js';
import { visitRows } from '../src/db/row-stream.js';
import { describeEachEngine, freshStorage } from './support/harness.js';

/**
 * The database side of the query budget (db/statement-budget.ts, visitRows' timeLimitMs): a
 * statement that would run for long is stopped near its budget with StatementTimedOut, on the main
 * connection and in a snapshot, whether its rows come in one batch or one by one; and the budget
 * stays with that statement: the next one on the same connection runs without it.
 */
describeEachEngine('statement time budget', (engine) => {
  let storage: Storage;
  beforeAll(async () => {
    storage = await freshStorage(engine);
  });
  afterAll(async () => {
    await storage?.close();
  });

  /** A statement of a few seconds unbudgeted: a count over 200 million generated rows, each passing the budget check. */
  const longCount = () => {
    const check = storage.dialect.statementBudgetCheck ?? sql`true`;
    return sql<{ n: number }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < 200000000) select count(*) as n from c where ${check}`.compile(storage.db);
  };

  async function expectStopped(executor: Storage['db'] | Awaited<ReturnType<Storage['openSnapshot']>>['db'], batches: { batchRows: number; maxRows: number }): Promise<number> {
    const started = performance.now();
    const error = await visitRows(executor, longCount(), { ...batches, timeLimitMs: 50 }, () => true).then(() => null, (caught: unknown) => caught);
    const took = performance.now() - started;
    expect(isStatementTimedOut(error), String(error)).toBe(true);
    expect((error as { code: string }).code).toBe('INVALID_REQUEST');
    expect(took).toBeLessThan(1500);
    return took;
  }

  it('stops a long statement near its budget, in one batch or row by row, and the next statement runs unbudgeted', async () => {
    const oneBatch = await expectStopped(storage.db, { batchRows: 1, maxRows: 1 });
    const rowByRow = await expectStopped(storage.db, { batchRows: 1, maxRows: 2 });
    console.log(`[statement-budget ${engine}] 50 ms budget: stopped after ${oneBatch.toFixed(0)} ms (one batch), ${rowByRow.toFixed(0)} ms (row by row)`);
    // The same connection, no budget: a statement longer than the spent budget, checking it thousands of
    // times (SQLite) or sleeping past it (PostgreSQL), runs to its end.
    const check = storage.dialect.statementBudgetCheck ?? sql`true`;
    const slowSql = engine === 'postgres'
      ? sql<{ n: number }>`select count(*) as n from (select pg_sleep(0.1)) s where ${check}`
      : sql<{ n: number }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < 300000) select count(*) as n from c where ${check}`;
    const rows: { n: number }[] = [];
    await visitRows<{ n: number }>(storage.db, slowSql.compile(storage.db), { batchRows: 1, maxRows: 1 }, (row) => rows.push(row) > 0);
    expect(Number(rows[0]!.n)).toBeGreaterThan(0);
  });

  it('stops a long statement in a snapshot too (an export reads in one)', async () => {
    const snapshot = await storage.openSnapshot();
    try {
      await expectStopped(snapshot.db, { batchRows: 1, maxRows: 1 });
    } finally {
      await snapshot.close();
    }
  });
});
