import { randomBytes } from 'node:crypto';
import { sql, type Expression } from 'kysely';
import { isUniqueViolation } from '../../db/db-errors.js';
import type { Dialect } from '../../db/dialect.js';
import { lockParentRow } from '../../db/parent-row-lock.js';
import { rowLimit } from '../../db/row-limit.js';
import type { Executor, RecordIndexesTable } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { AppError, conflict, invalidRequest, notFound } from '../../errors.js';
import { findCollection } from '../collections/collections.js';
import { collectionLiteralPredicate } from '../records/query/collection-literal.js';
import { fieldTerms } from '../records/query/compile.js';
import { parseFieldRef, type FieldRef } from '../records/query/field-ref.js';

/**
 * Record indexes (docs/design.md §6): named, per collection, over 1–4 fields, optionally unique. Each
 * is a real database index on `records`, over the very expressions compile.ts puts in filters and
 * ORDER BY (the terms of each field), so the planner uses it for both. It is a partial index of
 * its own collection's rows only (`where collection_id = '<the collection>'`):
 *
 *   ([collection_id,] <terms of field 1>, …, id)     id last: ties are ordered too, so a sort on
 *                                                     the fields plus our id tiebreak reads in
 *                                                     index order
 *   unique ([collection_id,] <terms of field 1>, …)  uniqueness within the collection, trash
 *                                                     included (a restore can never collide)
 *
 * The predicate is what keeps tenants apart: an index without one holds every row of `records`,
 * so a unique index of one collection refused duplicates within every other collection of every
 * workspace, and each index was built and kept up to date over everybody's records. A list query
 * names its collection (`collection_id = ?`), which is how both engines see that the index
 * applies: PostgreSQL plans with the bound values, SQLite re-plans when they change. The leading
 * collection_id, constant within the index, is there for SQLite's planner only
 * (Dialect.recordIndexesLeadWithCollection): it prices the index by its equality on that column
 * (sqlite_stat1), and without it chose to sort a collection rather than read it in index order.
 * PostgreSQL's planner, given the column, priced the index as a walk of all of it and scanned
 * large collections instead.
 *
 * A unique index refuses two records with equal scalar values; records where a field is missing,
 * null, an array or an object never collide (see jsonSortKeyOf). Writes that would collide fail
 * with the engine's unique error, which the app answers as CONFLICT.
 *
 * Building an index takes a lock that holds writes to `records` until it is built (no
 * CONCURRENTLY: it cannot run in a transaction, and we want the index and its row together).
 */

export interface RecordIndex {
  name: string;
  fields: string[];
  unique: boolean;
}

export interface CreateIndexInput {
  workspaceId: string;
  collectionId: string;
  name: string;
  fields: string[];
  unique: boolean;
  now: Date;
  /**
   * Most indexes the collection may hold (PLAINBASE_INDEXES_PER_COLLECTION): every request passes
   * it; only tools and tests that build indexes directly leave it out.
   */
  limit?: number;
}

export const INDEX_NAME = /^[a-z][a-z0-9_]{0,62}$/;
export const MAX_INDEX_FIELDS = 4;

const toRecordIndex = (row: Pick<RecordIndexesTable, 'name' | 'fields' | 'unique'>): RecordIndex => ({
  name: row.name,
  fields: JSON.parse(row.fields) as string[],
  unique: row.unique === 1,
});

function parseIndexFields(fields: string[]): FieldRef[] {
  if (fields.length < 1 || fields.length > MAX_INDEX_FIELDS) {
    throw invalidRequest(`An index has 1 to ${MAX_INDEX_FIELDS} fields.`, { field: 'body.fields' });
  }
  return fields.map((text, i) => {
    const parsed = parseFieldRef(text);
    if (!parsed.ok) throw invalidRequest(`fields[${i}]: ${parsed.reason}.`, { field: `body.fields[${i}]` });
    if (parsed.field.kind === 'column' && parsed.field.name === 'id') {
      throw invalidRequest(`fields[${i}]: records are indexed by id already.`, { field: `body.fields[${i}]` });
    }
    if (fields.indexOf(text) !== i) throw invalidRequest(`fields[${i}]: ${text} appears twice.`, { field: `body.fields[${i}]` });
    return parsed.field;
  });
}

/** The index's columns, in the order described at the top of this file. */
function indexColumns(fields: FieldRef[], unique: boolean, dialect: Dialect): Expression<unknown>[] {
  const terms = fields.flatMap((field) =>
    fieldTerms(field, dialect).map((term) => (term.nullable ? dialect.nullsFirstIndexColumn(term.expression) : term.expression)),
  );
  const collection = dialect.recordIndexesLeadWithCollection ? [sql.ref('collection_id')] : [];
  return [...collection, ...terms, ...(unique ? [] : [sql.ref('id')])];
}

/**
 * Runs `work` so that it takes effect whole or not at all: in a transaction of its own, or in a
 * savepoint of the caller's. A savepoint also keeps the caller's PostgreSQL transaction usable
 * after a failed statement, so the caller can still answer with our CONFLICT.
 */
async function atomically<T>(executor: Executor, work: (executor: Executor) => Promise<T>): Promise<T> {
  if (!executor.isTransaction) return executor.transaction().execute(work);
  const savepoint = sql.id(`record_index_${randomBytes(4).toString('hex')}`);
  await sql`savepoint ${savepoint}`.execute(executor);
  try {
    const result = await work(executor);
    await sql`release savepoint ${savepoint}`.execute(executor);
    return result;
  } catch (error) {
    await sql`rollback to savepoint ${savepoint}`.execute(executor).catch(() => undefined);
    throw error;
  }
}

export async function createIndex(executor: Executor, dialect: Dialect, input: CreateIndexInput): Promise<RecordIndex> {
  const { workspaceId, collectionId, name, fields, unique, now, limit } = input;
  if (!INDEX_NAME.test(name)) {
    throw invalidRequest('An index name starts with a lower-case letter, then up to 62 lower-case letters, digits and _.', { field: 'body.name' });
  }
  const refs = parseIndexFields(fields);
  const index: RecordIndex = { name, fields: refs.map((field) => field.name), unique };
  const sqlName = `rix_${randomBytes(8).toString('hex')}`;

  return atomically(executor, async (trx) => {
    // Concurrent creates on the collection count one after the other; the index built below holds writes to records anyway.
    await lockParentRow(trx, 'collections', collectionId);
    const existing = await trx
      .selectFrom('record_indexes')
      .select('name')
      .where('workspace_id', '=', workspaceId)
      .where('collection_id', '=', collectionId)
      .execute();
    if (existing.some((row) => row.name === name)) throw conflict(`The collection has an index named ${name} already.`, { name });
    if (limit !== undefined && existing.length >= limit) {
      throw conflict(`This collection already has ${limit} indexes, the most it may hold (PLAINBASE_INDEXES_PER_COLLECTION). Drop one it no longer needs first.`, { limit });
    }
    // The row first: a concurrent create of the same name fails here, before any index is built.
    try {
      await trx
        .insertInto('record_indexes')
        .values({ workspace_id: workspaceId, collection_id: collectionId, name, fields: JSON.stringify(index.fields), unique: unique ? 1 : 0, sql_name: sqlName, created_at: now.toISOString() })
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`The collection has an index named ${name} already.`, { name });
      throw error;
    }
    try {
      await sql`create ${sql.raw(unique ? 'unique index' : 'index')} ${sql.id(sqlName)} on ${sql.table('records')} (${sql.join(indexColumns(refs, unique, dialect))}) where ${collectionLiteralPredicate(collectionId)}`.execute(trx);
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new AppError('CONFLICT', `The index ${name} cannot be unique: some records of the collection share values of ${index.fields.join(', ')}.`, {
          name,
          fields: index.fields,
        });
      }
      throw error;
    }
    return index;
  });
}

/**
 * Creates an index on the workspace's collection named by id or name: the lookup and the index in
 * one transaction, so the collection cannot go away between them.
 */
export function createCollectionIndex(
  deps: Pick<Deps, 'db' | 'dialect' | 'clock' | 'config'>,
  workspaceId: string,
  collectionRef: string,
  index: { name: string; fields: string[]; unique: boolean },
): Promise<RecordIndex> {
  return deps.db.transaction().execute(async (trx) => {
    const collection = await findCollection(trx, workspaceId, collectionRef);
    return createIndex(trx, deps.dialect, { workspaceId, collectionId: collection.id, ...index, now: deps.clock.now(), limit: deps.config.indexesPerCollection });
  });
}

/** Drops an index of the workspace's collection named by id or name, in one transaction with the lookup. */
export function dropCollectionIndex(deps: Pick<Deps, 'db' | 'dialect'>, workspaceId: string, collectionRef: string, name: string): Promise<RecordIndex> {
  return deps.db.transaction().execute(async (trx) => {
    const collection = await findCollection(trx, workspaceId, collectionRef);
    return dropIndex(trx, deps.dialect, workspaceId, collection.id, name);
  });
}

/** A page of the indexes of the workspace's collection named by id or name (see pageOfIndexes). */
export async function pageOfCollectionIndexes(
  deps: Pick<Deps, 'db'>,
  workspaceId: string,
  collectionRef: string,
  page: { limit: number; after?: { createdAt: string; name: string } },
): Promise<(RecordIndex & { createdAt: string })[]> {
  const collection = await findCollection(deps.db, workspaceId, collectionRef);
  return pageOfIndexes(deps.db, workspaceId, collection.id, page);
}

/** The collection's indexes, oldest first. */
export async function listIndexes(executor: Executor, workspaceId: string, collectionId: string): Promise<RecordIndex[]> {
  return (await indexRows(executor, workspaceId, collectionId).execute()).map(toRecordIndex);
}

/** A page of the collection's indexes (as listIndexes orders them) after the position `after`, with each one's creation time. */
export async function pageOfIndexes(
  executor: Executor,
  workspaceId: string,
  collectionId: string,
  page: { limit: number; after?: { createdAt: string; name: string } },
): Promise<(RecordIndex & { createdAt: string })[]> {
  let query = indexRows(executor, workspaceId, collectionId).select('created_at');
  const { after } = page;
  if (after) query = query.where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('name', '>', after.name)])]));
  const rows = await query.limit(rowLimit(page.limit)).execute();
  return rows.map((row) => ({ ...toRecordIndex(row), createdAt: row.created_at }));
}

const indexRows = (executor: Executor, workspaceId: string, collectionId: string) =>
  executor
    .selectFrom('record_indexes')
    .select(['name', 'fields', 'unique'])
    .where('workspace_id', '=', workspaceId)
    .where('collection_id', '=', collectionId)
    .orderBy('created_at')
    .orderBy('name');

/**
 * Drops the index and its database index; NOT_FOUND when the collection has no index of that name.
 * (Dropping is the same SQL on both engines; the dialect parameter keeps the three calls alike.)
 */
export async function dropIndex(executor: Executor, _dialect: Dialect, workspaceId: string, collectionId: string, name: string): Promise<RecordIndex> {
  return atomically(executor, async (trx) => {
    const row = await trx
      .selectFrom('record_indexes')
      .select(['name', 'fields', 'unique', 'sql_name'])
      .where('workspace_id', '=', workspaceId)
      .where('collection_id', '=', collectionId)
      .where('name', '=', name)
      .executeTakeFirst();
    if (!row) throw notFound('index');
    await dropDatabaseIndex(trx, row.sql_name);
    await trx.deleteFrom('record_indexes').where('collection_id', '=', collectionId).where('name', '=', name).execute();
    return toRecordIndex(row);
  });
}

/** Drops every index of the collection, for when it is deleted for good. */
export async function dropAllIndexes(executor: Executor, _dialect: Dialect, workspaceId: string, collectionId: string): Promise<void> {
  await atomically(executor, async (trx) => {
    const rows = await trx
      .selectFrom('record_indexes')
      .select('sql_name')
      .where('workspace_id', '=', workspaceId)
      .where('collection_id', '=', collectionId)
      .execute();
    for (const row of rows) await dropDatabaseIndex(trx, row.sql_name);
    await trx.deleteFrom('record_indexes').where('workspace_id', '=', workspaceId).where('collection_id', '=', collectionId).execute();
  });
}

async function dropDatabaseIndex(executor: Executor, sqlName: string): Promise<void> {
  // IF EXISTS: the row is the truth; a database index already gone must not block removing it.
  await sql`drop index if exists ${sql.id(sqlName)}`.execute(executor);
}

/** The names createIndex gives database indexes; anything else in a restored row is refused. */
const SQL_INDEX_NAME = /^rix_[0-9a-f]{16}$/;

/**
 * Builds the database index behind every row of `record_indexes`, as createIndex built it: a
 * restore (modules/backups/) copies the rows, while the indexes themselves are the engine's own.
 * Answers how many it built.
 */
export async function buildStoredIndexes(executor: Executor, dialect: Dialect): Promise<number> {
  const rows = await executor.selectFrom('record_indexes').select(['collection_id', 'fields', 'unique', 'sql_name']).execute();
  for (const row of rows) {
    if (!SQL_INDEX_NAME.test(row.sql_name)) throw new Error(`record index ${JSON.stringify(row.sql_name)} has a name Plainbase does not make`);
    const refs = parseIndexFields(JSON.parse(row.fields) as string[]);
    const unique = row.unique === 1;
    await sql`create ${sql.raw(unique ? 'unique index' : 'index')} ${sql.id(row.sql_name)} on ${sql.table('records')} (${sql.join(indexColumns(refs, unique, dialect))}) where ${collectionLiteralPredicate(row.collection_id)}`.execute(executor);
  }
  return rows.length;
}
