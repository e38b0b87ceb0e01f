import { CompiledQuery, sql, type SqlBool } from 'kysely';
import type { Dialect, SearchSql } from '../../../db/dialect.js';
import type { CollectionsTable, Executor, RecordsTable } from '../../../db/schema.js';
import { rememberedGuardCondition, rememberedGuardValues } from '../../collections/remembered-collections.js';
import { keyGuardBoundValues, keyGuardCondition, type KeyGuard } from '../../keys/key-guess.js';
import { attachedFileIdsSql } from '../../files/attached-files.js';
import { collectionLiteralPredicate } from './collection-literal.js';
import { columnsOf, RECORD_COLUMNS, RECORD_QUERYABLE, type ColumnOf } from '../record-shape.js';
import { rowLimit } from '../../../db/row-limit.js';
import { visitRows } from '../../../db/row-stream.js';
import { AppError } from '../../../errors.js';
import { compileFilter, keysetCondition, orderModifiers, orderTermKinds, orderTerms, orderValues, termsPinnedByFilter } from './compile.js';
import type { FilterNode } from './filter-parser.js';
import { encodeJsonCursor, readJsonCursor } from './json-cursor.js';
import { formatSort, type SortKey } from './sort-parser.js';
import { unstorableTextReason } from '../../../storable-text.js';

/**
 * One page of a collection's records, by keyset: the next page starts strictly after the last
 * row's sort values and id, so records added or removed between pages shift nothing; every
 * record that was there all along is seen exactly once.
 */

/**
 * The columns a cursor is made from, those a sort may name (RECORD_QUERYABLE's and the data's);
 * always read, whatever `fields` asks for.
 */
export type CursorColumn = ColumnOf<(typeof RECORD_QUERYABLE)[number] | 'data'>;
export type CursorRow = Pick<RecordsTable, CursorColumn>;

/** A decoded cursor: the sort it was made for and the last row's values of orderTerms(sort). */
export interface Cursor {
  sort: string;
  values: (string | number | null)[];
}

export interface RecordQueryScope {
  executor: Executor;
  dialect: Dialect;
  workspaceId: string;
  collectionId: string;
  filter?: FilterNode;
  /** The trash (trashed_at set) instead of the live records. */
  trashed: boolean;
  /**
   * The collection as remembered (collections/remembered-collections.ts), when it was not looked
   * up: the query answers no rows unless the collection is still so.
   */
  remembered?: CollectionsTable;
  /** A guessed key's guard (keys/key-guess.ts), with `remembered` only: no rows unless it holds. */
  keyGuard?: KeyGuard;
  /** The statement runs under a time budget (query-budget.ts): it carries the engine's budget check. */
  budgeted?: boolean;
  /** Only records whose searched text matches (?search=, Dialect.search). */
  search?: SearchSql;
}

export interface ListRecordsOptions<F extends keyof RecordsTable = keyof RecordsTable> extends RecordQueryScope {
  sort: readonly SortKey[];
  /** Rows per page, 1–1000; one more row is read to tell whether a next page exists. */
  limit: number;
  after?: Cursor;
  /** Columns to read (default all); the cursor's columns are read anyway. */
  fields?: readonly F[];
  /** Also read each record's attached files (the `files` column of ListedFiles). */
  withFiles?: boolean;
  /**
   * With `search`: best match first (the score, then the id), instead of `sort`; each row has its
   * `search_score`, and `rankedAfter` is a ranked cursor's position.
   */
  ranked?: boolean;
  rankedAfter?: RankedCursor;
}

/** A ranked page's cursor: the last row's score and id. */
export interface RankedCursor {
  score: number;
  id: string;
}

/** The attached files' ids as attachedFileIdsSql gives them (files/attached-files.ts). */
export interface ListedFiles {
  files: string | null;
}

export const MAX_LIST_LIMIT = 1000;

const CURSOR_COLUMNS: readonly CursorColumn[] = columnsOf([...RECORD_QUERYABLE, 'data']);

/** The records of the scope (workspace, collection, live or trash) that the filter matches, nothing selected yet. */
export function scopedQuery({ executor, dialect, workspaceId, collectionId, filter, trashed, remembered, keyGuard, budgeted, search }: RecordQueryScope, searchJoined = false) {
  let query = executor
    .selectFrom('records')
    .where('workspace_id', '=', workspaceId)
    .where('collection_id', '=', collectionId);
  // Their values right after the first two, where compiledReusableListQuery puts them.
  if (remembered) query = query.where(rememberedGuardCondition(remembered));
  if (keyGuard) query = query.where(keyGuardCondition(keyGuard));
  // Said twice where a plan serves every call: the parameter keeps the values' order above, the
  // literal lets that plan use the collection's record indexes (collection-literal.ts).
  if (dialect.preparesRecordQueries) query = query.where(collectionLiteralPredicate(collectionId));
  query = query.where('trashed_at', trashed ? 'is not' : 'is', null);
  // Before the filter: SQLite tests the conditions in this order, and a row the filter rejects
  // would otherwise never reach the check. It binds no value, so the scope's still come first.
  if (budgeted && dialect.statementBudgetCheck) query = query.where(dialect.statementBudgetCheck);
  if (filter) query = query.where(compileFilter(filter, dialect));
  if (search && !searchJoined) query = query.where(search.matches);
  return query;
}

/**
 * The list query itself (not run), so tests can EXPLAIN exactly what listRecordRows runs. Terms
 * the filter pins to one value are left out of ORDER BY and the keyset: they order nothing.
 */
export function buildListRecordsQuery<F extends keyof RecordsTable = keyof RecordsTable>(options: ListRecordsOptions<F>) {
  const { sort, limit, after, fields } = options;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new AppError('INVALID_REQUEST', `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}.`, { field: 'querystring.limit' });
  }
  if (after && after.sort !== formatSort(sort)) throw cursorError('it was made for another sort');
  const columns = [...new Set([...(fields ?? RECORD_COLUMNS), ...CURSOR_COLUMNS])];
  if (options.search && options.ranked) {
    // Its rows are the same columns plus search_score (list-records.ts reads it for the cursor).
    return rankedQuery(options, options.search, columns) as unknown as ReturnType<typeof sortedQuery<F>>;
  }
  return sortedQuery(options, columns);
}

function sortedQuery<F extends keyof RecordsTable>(options: ListRecordsOptions<F>, columns: readonly string[]) {
  const { dialect, filter, sort, limit, after, withFiles } = options;
  const pinned = filter ? termsPinnedByFilter(filter, dialect) : new Set<string>();
  const terms = orderTerms(sort, dialect);
  const kept = terms.flatMap((term, i) => (pinned.has(term.key) ? [] : [{ term, value: after?.values[i] ?? null }]));
  let query = scopedQuery(options).select(columns as (keyof RecordsTable)[]);
  if (withFiles) query = query.select(sql.raw<string | null>(pageFilesSql(dialect)).as('files'));
  if (after) query = query.where(keysetCondition(kept.map(({ term }) => term), kept.map(({ value }) => value)));
  for (const { term } of kept) {
    query = query.orderBy(term.expression, orderModifiers(term));
  }
  return query.limit(rowLimit(limit + 1));
}

/**
 * Best match first: the records joined with their search rows, by score (Dialect.search), ties by
 * id; a cursor's position is the last row's score and id. The score is the record's own (its text
 * and the search), so the same record scores the same on the next page unless it was changed.
 */
function rankedQuery(options: ListRecordsOptions, search: SearchSql, columns: readonly string[]) {
  const { limit, rankedAfter, withFiles } = options;
  if (withFiles) throw new Error('a ranked list reads its files after the page');
  const selected = columns.map((column) => sql.ref(`records.${column}`).as(column));
  // The joined table is not in the schema's types (the engines' tables differ): the join and the select are written as SQL.
  let query = scopedQuery(options, true)
    .innerJoin(sql`record_search`.as('record_search') as unknown as 'records', (join) => join.on(search.joinOn))
    .where(search.joinedMatch)
    .select([...selected, search.score.as('search_score')]);
  if (rankedAfter) {
    const score = search.scoreValue(rankedAfter.score);
    query = query.where(sql<SqlBool>`(${search.score} < ${score} or (${search.score} = ${score} and records.id > ${rankedAfter.id}))`);
  }
  return query.orderBy(sql`search_score`, 'desc').orderBy(sql.ref('records.id'), 'asc').limit(rowLimit(limit + 1));
}

/**
 * Each record's files (attachedFileIdsSql), looked for only when the collection has any file at
 * all: the probe has no reference to the row, so PostgreSQL runs it once for the page and skips the
 * per-record subquery of a collection without files (a page of 50 cost about a quarter more with
 * it). The probe names the statement's first two parameters, the workspace and the collection:
 * scopedQuery binds them first and the select list binds nothing (listRecords checks).
 */
function pageFilesSql(dialect: Dialect): string {
  if (!dialect.numberedParameters) throw new Error('the files of a page in its statement need numbered parameters');
  const [workspace, collection] = [dialect.parameter(1), dialect.parameter(2)];
  return `case when exists (select 1 from files fl where fl.workspace_id = ${workspace} and fl.collection_id = ${collection}) then ${attachedFileIdsSql('records')} end`;
}

/** Whether a compiled list statement binds the workspace and the collection first, as pageFilesSql needs. */
export const bindsScopeFirst = (compiled: CompiledQuery, workspaceId: string, collectionId: string): boolean =>
  compiled.parameters[0] === workspaceId && compiled.parameters[1] === collectionId;

/**
 * A list query compiled once, for first pages: the statement of buildListRecordsQuery without a
 * cursor, for one limit (written into its text, rowLimit). Its first parameters (the workspace,
 * the collection and, when it trusts a remembered collection, rememberedGuardValues, and
 * keyGuardBoundValues when it trusts a guessed key) change from
 * call to call; the filter's own values after them do not (list-records.ts keeps these by filter
 * text and limit, and by collection where the text names it: namedCollectionId).
 */
export interface ReusableListQuery {
  sql: string;
  parameters: readonly unknown[];
  sort: readonly SortKey[];
  /** The collection the text names as a literal (Dialect.preparesRecordQueries): it serves no other. */
  namedCollectionId: string | null;
}

/** The parameters a reusable query takes anew on each call, in the order they are bound. */
const scopeValues = ({ workspaceId, collectionId, remembered, keyGuard }: ReusableScope): unknown[] =>
  [workspaceId, collectionId, ...(remembered ? rememberedGuardValues(remembered) : []), ...(keyGuard ? keyGuardBoundValues(keyGuard) : [])];

/** What a reusable query is run for. */
type ReusableScope = Pick<RecordQueryScope, 'workspaceId' | 'collectionId' | 'remembered' | 'keyGuard'>;

/**
 * Compiles the first-page query for reuse: built as listRecordRows would build it. Kysely binds
 * the values in the order the query says them, the scope's first (scopedQuery); a query that
 * does not start so (checked) is not reused, and null is returned.
 */
export function reusableListQuery(options: Omit<ListRecordsOptions, 'after'>): ReusableListQuery | null {
  const { sql, parameters } = buildListRecordsQuery(options).compile();
  const scope = scopeValues(options);
  const fits = parameters.length >= scope.length && scope.every((value, i) => parameters[i] === value);
  return fits ? { sql, parameters, sort: options.sort, namedCollectionId: options.dialect.preparesRecordQueries ? options.collectionId : null } : null;
}

/** A reusable first-page query, for this workspace and collection (as remembered, with the key guard, if it was made so), ready to run. */
export function compiledReusableListQuery(query: ReusableListQuery, scope: ReusableScope): CompiledQuery {
  if (query.namedCollectionId !== null && query.namedCollectionId !== scope.collectionId) throw new Error('a list query that names its collection is reused for another');
  const parameters = [...query.parameters];
  scopeValues(scope).forEach((value, i) => {
    parameters[i] = value;
  });
  return CompiledQuery.raw(query.sql, parameters);
}

/** Up to limit + 1 rows in sort order: a row beyond `limit` means there is a next page. */
export async function listRecordRows<F extends keyof RecordsTable = keyof RecordsTable>(
  options: ListRecordsOptions<F>,
): Promise<Pick<RecordsTable, F | CursorColumn>[]> {
  return (await buildListRecordsQuery(options).execute()) as Pick<RecordsTable, F | CursorColumn>[];
}

/** How many records match, with the same scope and filter as the list; within `timeLimitMs` when given (visitRows). */
export async function countRecords(options: RecordQueryScope, timeLimitMs?: number): Promise<number> {
  const query = scopedQuery(options).select((eb) => eb.fn.countAll<number>().as('count'));
  if (timeLimitMs === undefined) return Number((await query.executeTakeFirstOrThrow()).count);
  let count = 0;
  await visitRows<{ count: number }>(options.executor, query.compile(), { batchRows: 1, maxRows: 1, timeLimitMs }, (row) => {
    count = Number(row.count);
    return false;
  });
  return count;
}

// ---------------------------------------------------------------------------------------------
// Cursors (json-cursor.ts): {s: the sort, v: the row's values of orderTerms(sort)}.

export function encodeCursor(row: CursorRow, sort: readonly SortKey[]): string {
  // Record data is always a JSON object, so text here can only be SQLite's stored form; it is
  // parsed only when the sort has a data field (the cursor holds the last row's sort values).
  const needsData = sort.some((key) => key.field.kind === 'data');
  const data = needsData && typeof row.data === 'string' ? JSON.parse(row.data) : row.data;
  const cursor = { s: formatSort(sort), v: orderValues(sort, row, data) };
  return encodeJsonCursor(cursor);
}

function cursorError(reason: string): AppError {
  return new AppError('INVALID_REQUEST', `The cursor is not valid (${reason}); pass nextCursor exactly as received, with the same sort.`, {
    field: 'querystring.cursor',
  });
}

export function decodeCursor(text: string, sort: readonly SortKey[]): Cursor {
  const parsed = readJsonCursor(text);
  if (!parsed || !Object.hasOwn(parsed, 's') || !Object.hasOwn(parsed, 'v')) throw cursorError('it is not one of ours');
  const { s, v } = parsed as { s: unknown; v: unknown };
  if (s !== formatSort(sort)) throw cursorError('it was made for another sort');
  // Each value must be what that term can hold, so no cursor can make the query fail.
  const kinds = orderTermKinds(sort);
  if (!Array.isArray(v) || v.length !== kinds.length) throw cursorError('it does not fit the sort');
  v.forEach((value, i) => checkCursorValue(kinds[i]!, value));
  return { sort: s, values: v };
}

/** A ranked page's cursor (?search= without sort): {r: the last row's score, i: its id}. */
export function encodeRankedCursor(row: { id: string; search_score?: number | string }): string {
  return encodeJsonCursor({ r: Number(row.search_score), i: row.id });
}

export function decodeRankedCursor(text: string): RankedCursor {
  const parsed = readJsonCursor(text);
  if (!parsed) throw cursorError('it is not one of ours');
  if (!Object.hasOwn(parsed, 'r') || !Object.hasOwn(parsed, 'i')) throw cursorError('it was not made for a search without sort');
  const { r, i } = parsed as { r: unknown; i: unknown };
  if (typeof r !== 'number' || !Number.isFinite(r) || typeof i !== 'string' || i.length > 64 || unstorableTextReason(i) !== undefined) throw cursorError('it does not fit the search');
  return { score: r, id: i };
}

function checkCursorValue(part: ReturnType<typeof orderTermKinds>[number], value: unknown): void {
  const fits =
    part === 'rank' ? value === null || (Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 4)
    : part === 'number' ? value === null || (typeof value === 'number' && Number.isFinite(value))
    : part === 'text' ? value === null || (typeof value === 'string' && unstorableTextReason(value) === undefined)
    : typeof value === 'string' && value.length <= 64 && unstorableTextReason(value) === undefined;
  if (!fits) throw cursorError('it does not fit the sort');
}
