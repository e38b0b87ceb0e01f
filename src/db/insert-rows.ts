import { CompiledQuery } from 'kysely';
import { dialectOf } from './dialect.js';
import { LruMap } from '../lru-map.js';
import type { Database, Executor } from './schema.js';

/** SQL texts already written, by engine, table, columns and row count; bounded. */
const texts = new LruMap<string, string>(200);

/** The most bound parameters of one statement on both engines: SQLite's limit (PostgreSQL's is 65535). */
const MAX_PARAMETERS = 32766;

/**
 * One multi-row INSERT, for bulk writes (imports and their events). Kysely's insert builder makes
 * and compiles a query node for every value, which costs as much as SQLite takes to write the
 * row; here the SQL text is written once per shape (a full batch has the same text every time,
 * so the SQLite statement cache keeps it prepared) and the values are bound as they are.
 * Kysely plugins do not see the query (it is run compiled).
 */
export async function insertRows<T extends keyof Database, C extends keyof Database[T] & string>(
  executor: Executor,
  table: T,
  columns: readonly C[],
  rows: readonly Pick<Database[T], C>[],
): Promise<void> {
  if (rows.length === 0) return;
  const parameters: unknown[] = new Array(rows.length * columns.length);
  let at = 0;
  for (const row of rows) {
    for (const column of columns) parameters[at++] = row[column];
  }
  await insertValues(executor, table, columns, parameters);
}

/**
 * insertRows for callers that already hold the values in one flat list, row after row, each row
 * its values in the order of `columns`: no object per row is made only to be taken apart again
 * (an import writes millions of values this way). Rows past the bound-parameter limit go into
 * further statements.
 */
export async function insertValues<T extends keyof Database>(
  executor: Executor,
  table: T,
  columns: readonly (keyof Database[T] & string)[],
  values: readonly unknown[],
): Promise<void> {
  const rowCount = values.length / columns.length;
  if (rowCount === 0) return;
  if (!Number.isInteger(rowCount)) throw new Error(`insertValues: ${values.length} values do not make whole rows of ${columns.length} columns`);
  const perStatement = Math.floor(MAX_PARAMETERS / columns.length) * columns.length;
  if (values.length <= perStatement) return insertStatement(executor, table, columns, values);
  for (let start = 0; start < values.length; start += perStatement) {
    await insertStatement(executor, table, columns, values.slice(start, start + perStatement));
  }
}

async function insertStatement(executor: Executor, table: string, columns: readonly string[], values: readonly unknown[]): Promise<void> {
  const rowCount = values.length / columns.length;
  const dialect = dialectOf(executor);
  const key = `${dialect.engine} ${table} ${columns.join(',')} ${rowCount}`;
  let text = texts.get(key);
  if (text === undefined) {
    const quoted = columns.map((column) => `"${column}"`).join(', ');
    let position = 0;
    const tuples = Array.from({ length: rowCount }, () => `(${columns.map(() => dialect.parameter(++position)).join(', ')})`);
    text = `insert into "${table}" (${quoted}) values ${tuples.join(', ')}`;
    texts.set(key, text);
  }
  await executor.executeQuery(CompiledQuery.raw(text, values as unknown[]));
}
