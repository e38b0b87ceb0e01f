import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect as KyselyDialect,
  Driver,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely';
import { mapDriverError } from './db-errors.js';
import { attachDialect, type Dialect } from './dialect.js';

/**
 * Kysely's dialect for the engine, with Plainbase's Dialect attached to its adapter (dialectOf)
 * and every driver error mapped to the app's own (db-errors.ts) as it leaves the driver: queries,
 * BEGIN and COMMIT, savepoints, streams, and taking a connection from the pool.
 */
export function withPlainbaseDialect(kysely: KyselyDialect, dialect: Dialect): KyselyDialect {
  return {
    createAdapter: () => {
      const adapter = kysely.createAdapter();
      attachDialect(adapter, dialect);
      return adapter;
    },
    createDriver: () => new ErrorMappingDriver(kysely.createDriver(), (error) => mapDriverError(dialect, error)),
    createQueryCompiler: () => kysely.createQueryCompiler(),
    createIntrospector: (db) => kysely.createIntrospector(db),
  };
}

type MapError = (error: unknown) => unknown;

class ErrorMappingDriver implements Driver {
  /** Each connection's wrapper, made once: drivers hand out the same connection objects again. */
  private readonly wrappers = new WeakMap<DatabaseConnection, ErrorMappingConnection>();

  constructor(private readonly driver: Driver, private readonly mapError: MapError) {}

  init(): Promise<void> {
    return this.driver.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    let connection: DatabaseConnection;
    try {
      connection = await this.driver.acquireConnection();
    } catch (error) {
      throw this.mapError(error);
    }
    let wrapper = this.wrappers.get(connection);
    if (!wrapper) {
      wrapper = new ErrorMappingConnection(connection, this.mapError);
      this.wrappers.set(connection, wrapper);
    }
    return wrapper;
  }

  // The driver runs BEGIN, COMMIT and savepoints through the connection it is given: the wrapper,
  // so their errors are mapped too.
  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.driver.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.driver.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.driver.rollbackTransaction(connection);
  }

  async savepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    await this.driver.savepoint?.(connection, name, compileQuery);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    await this.driver.rollbackToSavepoint?.(connection, name, compileQuery);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    await this.driver.releaseSavepoint?.(connection, name, compileQuery);
  }

  /** The driver's own connection back: releasing it may use what only the driver's object has. */
  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.driver.releaseConnection((connection as ErrorMappingConnection).connection);
  }

  destroy(): Promise<void> {
    return this.driver.destroy();
  }
}

/**
 * The driver's own connection behind one that Kysely hands out (this module wraps each), for what
 * only the driver's connection can do: COPY on PostgreSQL (postgres-copy.ts). Its errors are the
 * driver's, not yet mapped.
 */
export const driverConnectionOf = (connection: DatabaseConnection): DatabaseConnection =>
  connection instanceof ErrorMappingConnection ? connection.connection : connection;

class ErrorMappingConnection implements DatabaseConnection {
  constructor(readonly connection: DatabaseConnection, private readonly mapError: MapError) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.connection.executeQuery<R>(query);
    } catch (error) {
      throw this.mapError(error);
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.connection.streamQuery<R>(query, chunkSize);
    } catch (error) {
      throw this.mapError(error);
    }
  }
}
