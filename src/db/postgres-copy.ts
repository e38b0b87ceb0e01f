import type { DatabaseConnection } from 'kysely';
import type pg from 'pg';
import type { CopyStreamQuery } from 'pg-copy-streams';
import { copyTextRows } from './copy-text.js';
import { mapDriverError } from './db-errors.js';
import { dialectOf, type PreparedRows } from './dialect.js';
import { driverConnectionOf } from './kysely-dialect.js';
import { PostgresClientConnection } from './postgres-driver.js';
import type { Executor } from './schema.js';

/** Loaded at the first COPY, so that a SQLite process never loads it. */
let copyStreams: Promise<typeof import('pg-copy-streams')> | undefined;

/**
 * PostgreSQL's Dialect.prepareRows: the rows encoded now in COPY's text format (copy-text.ts),
 * then written with one `COPY table (columns) FROM STDIN` on the executor's connection, inside
 * its transaction: a COPY that fails leaves the transaction failed, and its ROLLBACK takes back
 * this COPY's rows and every earlier one's. COPY has no statement of thousands of parameters to
 * parse, plan and bind: the rows go straight to the table and its indexes.
 *
 * The whole text goes to the stream in one write, then the stream is ended: pg-copy-streams
 * sends it as one CopyData message, and no write of ours is left queued behind it should the
 * server refuse a row half-way (the library would then send that write on a connection it has
 * already let go of, and throw).
 */
export function prepareCopy(table: string, columns: readonly string[], values: readonly unknown[]): PreparedRows {
  if (values.length === 0) return { write: async () => undefined };
  const statement = `copy "${table}" (${columns.map((column) => `"${column}"`).join(', ')}) from stdin`;
  const text = copyTextRows(values, columns.length);
  return {
    write: async (executor) => {
      const { from: copyFrom } = await (copyStreams ??= import('pg-copy-streams'));
      try {
        await withClient(executor, (client) => copyIn(client.query(copyFrom(statement)), text));
      } catch (error) {
        // As Kysely's queries' errors are (kysely-dialect.ts): a lost connection is a 503.
        throw mapDriverError(dialectOf(executor), error);
      }
    },
  };
}

/** Sends the text and waits for PostgreSQL's answer to the COPY: its rows are in the table then. */
function copyIn(stream: CopyStreamQuery, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // Kept for good: after a refused COPY the library may report a second error on the same stream.
    stream.on('error', reject);
    stream.on('finish', resolve);
    stream.end(text);
  });
}

/**
 * Lends `work` the pg client the executor runs its queries on: a transaction's own, held by
 * Kysely's connection provider until `work` settles, so no query of the transaction runs between.
 */
function withClient<T>(executor: Executor, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return executor.getExecutor().provideConnection((connection: DatabaseConnection) => {
    const own = driverConnectionOf(connection);
    if (!(own instanceof PostgresClientConnection)) throw new Error('COPY needs a PostgreSQL connection opened by connectStorage (db/connect.ts)');
    return work(own.client);
  });
}
