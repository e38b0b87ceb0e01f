import {
  CompiledQuery,
  createQueryId,
  IdentifierNode,
  PostgresAdapter,
  PostgresQueryCompiler,
  RawNode,
  type DatabaseConnection,
  type Dialect as KyselyDialect,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';
import type Cursor from 'pg-cursor';
import { SchemaInUseIntrospector } from './postgres-introspector.js';

/**
 * Kysely's dialect for PostgreSQL through pg, with a driver of Plainbase's own instead of Kysely's
 * PostgresDriver, for one reason: COPY (postgres-copy.ts). pg-copy-streams runs `COPY … FROM
 * STDIN` by handing its own query object to the pg client, so a bulk write inside a transaction
 * needs the very client that transaction runs on. Kysely's PostgresConnection keeps its client in
 * a private field, and no hook of its driver tells which client a connection wraps (the pool hands
 * clients out concurrently, so "the last one connected" is not an answer). This driver's
 * connections hold their client openly (PostgresClientConnection.client); in everything else it
 * does what Kysely's does, statement for statement.
 */
export function postgresKyselyDialect(pool: pg.Pool, cursor: typeof Cursor): KyselyDialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PostgresClientDriver(pool, cursor),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (db) => new SchemaInUseIntrospector(db),
  };
}

class PostgresClientDriver implements Driver {
  /** One connection per pooled client, made when the pool first hands that client out. */
  private readonly connections = new WeakMap<pg.PoolClient, PostgresClientConnection>();
  private destroyed = false;

  constructor(private readonly pool: pg.Pool, private readonly cursor: typeof Cursor) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.pool.connect();
    if (this.destroyed) {
      client.release();
      throw new Error('driver has already been destroyed');
    }
    let connection = this.connections.get(client);
    if (!connection) {
      connection = new PostgresClientConnection(client, this.cursor);
      this.connections.set(client, connection);
      // The pool listens for a client's errors only while the client is idle. A socket error
      // while it is lent out and no query is running (the server closing the connection under a
      // COPY whose data is still being sent: ECONNRESET) would be emitted to nobody and end the
      // process. The query that was running has had its error already, and the pool drops the
      // client when it comes back (it is no longer queryable).
      client.on('error', () => undefined);
    }
    return connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let text = 'begin';
    if (settings.isolationLevel || settings.accessMode) {
      text = 'start transaction';
      if (settings.isolationLevel) text += ` isolation level ${settings.isolationLevel}`;
      if (settings.accessMode) text += ` ${settings.accessMode}`;
    }
    await connection.executeQuery(CompiledQuery.raw(text));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async savepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(savepointCommand('savepoint', name, compileQuery));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(savepointCommand('rollback to', name, compileQuery));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(savepointCommand('release', name, compileQuery));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as PostgresClientConnection).client.release();
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.pool.end();
  }
}

/** The name goes through the compiler as an identifier, so it is quoted like any other. */
const savepointCommand = (command: string, name: string, compileQuery: QueryCompiler['compileQuery']) =>
  compileQuery(RawNode.createWithChildren([RawNode.createWithSql(`${command} `), IdentifierNode.create(name)]), createQueryId());

/** A pooled pg client as a Kysely connection, the client in reach of COPY (postgres-copy.ts). */
export class PostgresClientConnection implements DatabaseConnection {
  constructor(readonly client: pg.PoolClient, private readonly cursor: typeof Cursor) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const { command, rowCount, rows } = await this.client.query(query.sql, [...query.parameters]);
      const changed = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
      return { numAffectedRows: changed ? BigInt(rowCount ?? 0) : undefined, rows: rows ?? [] };
    } catch (error) {
      throw withCallerStack(error);
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    if (chunkSize === undefined || !Number.isInteger(chunkSize) || chunkSize <= 0) throw new Error('chunkSize must be a positive integer');
    const cursor = this.client.query(new this.cursor<R>(query.sql, query.parameters.slice()));
    try {
      while (true) {
        const rows = await cursor.read(chunkSize);
        if (rows.length === 0) break;
        yield { rows };
      }
    } finally {
      await cursor.close();
    }
  }
}

/**
 * The error with the stack of the code that ran the query added, as Kysely's driver does: pg's
 * own stack ends in its socket handler, which says nothing of where the query came from.
 */
function withCallerStack(error: unknown): unknown {
  const caller = new Error().stack;
  if (error instanceof Error && error.stack && caller) error.stack += `\n${caller.split('\n').slice(1).join('\n')}`;
  return error;
}
