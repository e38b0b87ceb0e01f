import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { connectStorage, type Storage } from '../src/db/connect.js';
import { isStatementTimedOut } from '../src/db/db-errors.js';
import { readPrepared, readPreparedWithin } from '../src/db/direct-query.js';
import { STATEMENTS_PER_CONNECTION, statementNameOf } from '../src/db/prepared-statements.js';
import { freshStorage } from './support/harness.js';

// PostgreSQL only: statements named by their text are how Plainbase uses PostgreSQL's per-connection
// prepared statements. SQLite keeps its statements in statement-cache.ts (tested there), and
// readPrepared answers null for it, which the last test checks.
const postgresUrl = inject('postgresUrl');

describe.skipIf(postgresUrl === null)('statements named by their text, on PostgreSQL', () => {
  let fresh: Storage & { schema?: string };
  /** The same schema through a pool of one connection, so that its statements can be counted. */
  let storage: Storage;
  beforeEach(async () => {
    fresh = await freshStorage('postgres');
    storage = await connectStorage({ engine: 'postgres', url: postgresUrl! }, { schema: fresh.schema, poolSize: 1 });
  });
  afterEach(async () => {
    await storage.close();
    await fresh.close();
  });

  const textNumber = (n: number) => `select $1::int + ${n} as n`;
  const run = async (n: number) => (await readPrepared(storage.db, textNumber(n), [1]))!;
  /** The statements named by text that the pool's one connection holds. */
  const preparedNames = async () =>
    (await sql<{ name: string }>`select name from pg_prepared_statements where name like 'plainbase_text_%'`.execute(storage.db)).rows.map((row) => row.name);

  it('prepare a text once per connection and run it again by name', async () => {
    for (let i = 0; i < 3; i += 1) expect(await run(7)).toEqual([{ n: 8 }]);
    expect(await preparedNames()).toEqual([statementNameOf(textNumber(7))]);
    expect(statementNameOf(textNumber(7))).toMatch(/^plainbase_text_[0-9a-f]{40}$/);
    expect(statementNameOf(textNumber(8))).not.toBe(statementNameOf(textNumber(7)));
  });

  it(`prepare at most ${STATEMENTS_PER_CONNECTION} texts per connection; texts past them run unnamed, with the same answers`, async () => {
    const texts = STATEMENTS_PER_CONNECTION + 20;
    for (let round = 0; round < 2; round += 1) {
      for (let n = 0; n < texts; n += 1) expect(await run(n)).toEqual([{ n: n + 1 }]);
      const names = new Set(await preparedNames());
      expect(names.size).toBe(STATEMENTS_PER_CONNECTION);
      // The first texts the connection met are the ones it keeps.
      expect(names.has(statementNameOf(textNumber(0)))).toBe(true);
      expect(names.has(statementNameOf(textNumber(STATEMENTS_PER_CONNECTION - 1)))).toBe(true);
      expect(names.has(statementNameOf(textNumber(STATEMENTS_PER_CONNECTION)))).toBe(false);
    }
  });

  it('report a failing statement as any query does, and the connection goes on', async () => {
    await expect(readPrepared(storage.db, 'select $1::int / 0 as n', [1])).rejects.toThrow(/division by zero/);
    expect(await run(1)).toEqual([{ n: 2 }]);
    // Not for a transaction: its statements must run on its own connection, through Kysely.
    await storage.db.transaction().execute(async (trx) => {
      expect(readPrepared(trx, textNumber(1), [1])).toBeNull();
    });
  });

  it('run by name within a time budget too, which stops a statement past it and leaves the connection usable', async () => {
    for (let i = 0; i < 2; i += 1) expect(await readPreparedWithin(storage.db, textNumber(3), [1], 1000)).toEqual([{ n: 4 }]);
    expect(await preparedNames()).toEqual([statementNameOf(textNumber(3))]);
    const slow = readPreparedWithin(storage.db, 'select pg_sleep($1::float8) as slept', [5], 100)!;
    await expect(slow).rejects.toSatisfy(isStatementTimedOut);
    // The timeout was local to that transaction: the same connection runs a long statement after it.
    expect(await readPrepared(storage.db, 'select pg_sleep($1::float8)::text as slept', [0.2])).toEqual([{ slept: '' }]);
  });
});

describe('statements named by their text, on SQLite', () => {
  it('are not made: readPrepared answers null and the caller runs the query as usual', async () => {
    const storage = await freshStorage('sqlite');
    try {
      expect(readPrepared(storage.db, 'select ? + 1 as n', [1])).toBeNull();
    } finally {
      await storage.close();
    }
  });
});
