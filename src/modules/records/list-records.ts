import type { CompiledQuery } from 'kysely';
import { isUnreadableJson } from '../../db/db-errors.js';
import { visitRows } from '../../db/row-stream.js';
import type { CollectionsTable, RecordsTable } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { rowLimit } from '../../db/row-limit.js';
import { invalidRequest, unreadableRecords } from '../../errors.js';
import { LruMap } from '../../lru-map.js';
import { findCollection } from '../collections/collections.js';
import { rememberCollection, rememberedCollection } from '../collections/remembered-collections.js';
import { attachedFileIdsOf, withAttachedFiles } from '../files/attached-files.js';
import type { KeyGuard, KeyGuess } from '../keys/key-guess.js';
import { fieldValueOf, parseFieldRef } from './query/field-ref.js';
import { parseFilter } from './query/filter-parser.js';
import { searchOf } from '../search/search.js';
import { bindsScopeFirst, buildListRecordsQuery, compiledReusableListQuery, countRecords, decodeCursor, decodeRankedCursor, encodeCursor, encodeRankedCursor, reusableListQuery, type CursorColumn, type ListedFiles, type RecordQueryScope, type ReusableListQuery } from './query/list.js';
import { queryBudget, type QueryCaller } from './query/query-budget.js';
import { parseSort, type SortKey } from './query/sort-parser.js';
import { readAhead } from './read-ahead.js';
import { RECORD_LISTED_COLUMNS, toRecordRead, type RecordData, type RecordRead, type RecordReadRow } from './record-shape.js';

export interface ListQuery {
  filter?: string;
  sort?: string;
  limit: number;
  cursor?: string;
  trashed?: boolean;
  /** Comma list of data paths to return, like `data.name,data.address.city`. */
  fields?: string;
  /** Also answer how many records match (one more query, so off by default). */
  count?: boolean;
  /** Full-text search (search/search.ts): words, "phrases", prefix*; best match first unless `sort` is given. */
  search?: string;
}

export interface RecordPage {
  data: RecordRead[];
  nextCursor: string | null;
  total?: number;
}

/**
 * A listed record's view needs only what the query does not pin (RECORD_LISTED_COLUMNS, without
 * the collection): fewer columns read is measurably less work per row for SQLite and the driver,
 * and a page has up to 1000.
 */
const LISTED_COLUMNS = RECORD_LISTED_COLUMNS;
/** The live records' list: trashed_at is null in every row it can return, so it is not read. */
const LIVE_LISTED_COLUMNS = RECORD_LISTED_COLUMNS.filter((column) => column !== 'trashed_at');
type ListedRow = RecordReadRow & Pick<RecordsTable, CursorColumn> & Partial<ListedFiles> & { search_score?: number | string };

/**
 * First-page list queries by engine, trash, limit, sort and filter, compiled (ReusableListQuery): a
 * program polling the same list sends the same filter each time, and parsing it, building the
 * query tree and compiling it cost about as much as running it. Least recently used goes first;
 * only filters that parsed and compiled are kept, so bad input never fills it.
 */
const reusableLists = new LruMap<string, ReusableListQuery>(200);

function reusableListFor(key: string, make: () => ReusableListQuery | null): ReusableListQuery | null {
  const found = reusableLists.get(key);
  if (found) return found;
  const made = make();
  if (made) reusableLists.set(key, made);
  return made;
}

/**
 * A page of a collection's records: filtered, sorted, paged by keyset cursor.
 *
 * Where statements are round trips, a collection remembered from an earlier call is not looked
 * up again: the page's statement carries the check that it is still the same
 * (collections/remembered-collections.ts), so a page with records proves it. An empty page
 * proves nothing (no records, or the collection changed), so it is asked again the long way.
 * A caller's key that was only guessed (keys/key-guess.ts) is checked the same way: by the page's
 * statement, or in full before the long way.
 *
 * A filter, a sort and a count run under the caller's time budget (query/query-budget.ts): an
 * anonymous caller's is smaller.
 */
export async function listRecords(deps: Deps, workspaceId: string, idOrName: string, query: ListQuery, guess?: KeyGuess, caller: QueryCaller = 'credentialed'): Promise<RecordPage> {
  // A search needs the collection's search state as it is now, which a remembered copy may not have.
  const remembered = query.search === undefined ? rememberedCollection(deps, workspaceId, idOrName) : undefined;
  if (remembered) {
    const keyGuard = guess && !guess.settled ? guess.guard : undefined;
    const page = await listPage(deps, remembered, { remembered, keyGuard }, query, caller);
    if (page.data.length > 0) {
      if (keyGuard) guess?.held();
      return page;
    }
  }
  await guess?.confirm();
  const collection = await findCollection(deps.db, workspaceId, idOrName);
  rememberCollection(deps, workspaceId, idOrName, collection);
  return listPage(deps, collection, {}, query, caller);
}

/** What a page's statement checks besides its query: the collection as remembered, a guessed key. */
interface PageGuards {
  remembered?: CollectionsTable;
  keyGuard?: KeyGuard;
}

async function listPage(deps: Deps, collection: CollectionsTable, { remembered, keyGuard }: PageGuards, query: ListQuery, caller: QueryCaller): Promise<RecordPage> {
  const workspaceId = collection.workspace_id;
  // A page without filter or sort reads an index from its start: only what the caller shapes is budgeted.
  const pageBudget = queryBudget(deps, workspaceId, caller, Boolean(query.filter) || Boolean(query.sort) || query.search !== undefined);
  const search = query.search === undefined ? undefined : searchOf(deps, collection, query.search);
  // Best match first when no sort is asked for.
  const ranked = search !== undefined && !query.sort;
  const trashed = query.trashed ?? false;
  const fields = trashed ? LISTED_COLUMNS : LIVE_LISTED_COLUMNS;
  const pick = query.fields ? parseFields(query.fields) : null;
  // The filter is parsed at most once, and not at all when a reusable query answers the page.
  let scope: RecordQueryScope | undefined;
  const parsedScope = (): RecordQueryScope => (scope ??= {
    executor: deps.db, dialect: deps.dialect, workspaceId, collectionId: collection.id, trashed, remembered, keyGuard, budgeted: pageBudget.applies,
    filter: query.filter ? parseFilter(query.filter) : undefined, search,
  });
  let sort: readonly SortKey[];
  let compiled: CompiledQuery;
  // Where the query names its collection as a literal (Dialect.preparesRecordQueries), it is kept per collection.
  const collectionInText = deps.dialect.preparesRecordQueries ? collection.id : '';
  const key = query.cursor === undefined && search === undefined ? `${deps.dialect.engine}\n${collectionInText}\n${trashed}\n${remembered !== undefined}\n${keyGuard !== undefined}\n${query.limit}\n${query.sort ?? ''}\n${query.filter ?? ''}` : null;
  // Where statements are round trips, each record's files come with it (the statement probes for
  // any file of the collection first), instead of from a probe and a statement for the page's.
  // (Not a ranked page's: its score, in the select list, binds values before the scope's.)
  const withFiles = deps.dialect.statementsRoundTrip && !ranked;
  const reusable = key === null ? null : reusableListFor(key, () => reusableListQuery({ ...parsedScope(), sort: parseSort(query.sort), limit: query.limit, fields, withFiles }));
  const explained = <T>(work: Promise<T>) => explainingUnreadable(deps, workspaceId, collection.id, work);
  if (reusable) {
    sort = reusable.sort;
    compiled = compiledReusableListQuery(reusable, { workspaceId, collectionId: collection.id, remembered, keyGuard });
  } else if (ranked) {
    sort = [];
    const rankedAfter = query.cursor ? decodeRankedCursor(query.cursor) : undefined;
    compiled = buildListRecordsQuery({ ...parsedScope(), sort, limit: query.limit, fields, withFiles, ranked, rankedAfter }).compile();
  } else {
    sort = parseSort(query.sort);
    const after = query.cursor ? decodeCursor(query.cursor, sort) : undefined;
    compiled = buildListRecordsQuery({ ...parsedScope(), sort, limit: query.limit, after, fields, withFiles }).compile();
  }
  if (withFiles && !bindsScopeFirst(compiled, workspaceId, collection.id)) throw new Error('a list statement with files must bind the workspace and the collection first');
  const pinned = { collectionId: collection.id };
  const { rows, data, more } = await explained(pageBudget.run((timeLimitMs) => readPage(deps, compiled, query.limit, timeLimitMs, (row) => {
    const read = toRecordRead(deps.dialect, row, pinned);
    if (pick) read.dataJson = JSON.stringify(pick(deps.dialect.readJson(row.data) as RecordData));
    if (withFiles) read.files = attachedFileIdsOf(row.files);
    return read;
  })));
  if (!withFiles) await withAttachedFiles(deps.db, workspaceId, data, collection.id);
  // Attached files lengthen their records' answers: drop from the end what no longer fits.
  let cut = false;
  if (data.some((read) => read.files.length > 0)) {
    let bytes = data.reduce((total, read) => total + answerBytes(read), PAGE_FRAME_BYTES);
    while (data.length > 1 && bytes > deps.config.pageBytes) {
      bytes -= answerBytes(data.pop()!);
      rows.pop();
      cut = true;
    }
  }
  const last = rows[rows.length - 1];
  const page: RecordPage = { data, nextCursor: (more || cut) && last ? (ranked ? encodeRankedCursor(last) : encodeCursor(last, sort)) : null };
  if (query.count) {
    // A count reads every matching record, filter or not.
    const countBudget = queryBudget(deps, workspaceId, caller, true);
    page.total = await explained(countBudget.run((timeLimitMs) => countRecords({ ...parsedScope(), budgeted: true }, timeLimitMs)));
  }
  return page;
}

/**
 * A filter or sort on data fields that fails on records SQLite cannot read (stored deeper than
 * 1,000 levels before the 100-level limit) answers 409 naming them, so they can be replaced.
 */
export async function explainingUnreadable<T>(deps: Deps, workspaceId: string, collectionId: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!isUnreadableJson(error) || !deps.dialect.unreadableJson) throw error;
    const rows = await deps.db
      .selectFrom('records')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('collection_id', '=', collectionId)
      .where(deps.dialect.unreadableJson)
      .orderBy('id')
      .limit(rowLimit(10))
      .execute();
    throw unreadableRecords(rows.map((row) => row.id));
  }
}

/**
 * Room for a record in a page's JSON besides its data and files: its id, collection id, times,
 * schema version and the punctuation (record-json.ts writes at most about 230 bytes of these).
 */
const RECORD_FRAME_BYTES = 256;
/** `{"data":[],"nextCursor":"…","total":…}`, with room for a long cursor. */
const PAGE_FRAME_BYTES = 1024;
/** `"fil_…",` for each attached file. */
const FILE_ID_BYTES = 33;

/** An upper bound on a record's bytes in a page's answer. */
const answerBytes = (read: RecordRead): number => Buffer.byteLength(read.dataJson) + RECORD_FRAME_BYTES + read.files.length * FILE_ID_BYTES;

/**
 * The rows of a page, read a batch at a time (visitRows) until the page is full: `limit` records,
 * or the next record would take the answer past PLAINBASE_PAGE_BYTES (a page always holds one).
 * `more` says a row beyond the page exists. However large the records, the server holds at most
 * READ_AHEAD_PAGES budgets of rows it has read and the page it answers, not the `limit + 1` rows
 * the query allows.
 *
 * Bytes are counted exactly (UTF-8) only once the page could be near its budget: until then
 * three bytes per UTF-16 unit bound it, and the common small page never counts a byte.
 */
async function readPage(deps: Deps, compiled: CompiledQuery, limit: number, timeLimitMs: number | undefined, toRead: (row: ListedRow) => RecordRead): Promise<{ rows: ListedRow[]; data: RecordRead[]; more: boolean }> {
  const budget = deps.config.pageBytes;
  const rows: ListedRow[] = [];
  const data: RecordRead[] = [];
  let bound = PAGE_FRAME_BYTES;
  let exact: number | null = null;
  let more = false;
  const fits = (read: RecordRead): boolean => {
    const rough = read.dataJson.length * 3 + RECORD_FRAME_BYTES;
    if (exact === null && bound + rough <= budget) {
      bound += rough;
      return true;
    }
    exact ??= data.reduce((total, kept) => total + answerBytes(kept), PAGE_FRAME_BYTES);
    const size = answerBytes(read);
    if (data.length > 0 && exact + size > budget) return false;
    exact += size;
    return true;
  };
  // A list's text is its filter's and sort's shape, the same from call to call (the values are parameters).
  await visitRows<ListedRow>(deps.db, compiled, { ...readAhead(deps, limit + 1), repeats: true, timeLimitMs }, (row) => {
    const read = data.length < limit ? toRead(row) : null;
    if (!read || !fits(read)) {
      more = true;
      return false;
    }
    rows.push(row);
    data.push(read);
    return true;
  });
  return { rows, data, more };
}

const NO_COLUMNS = { id: '', created_at: '', updated_at: '' };

/** The projection for `fields`: each path keeps its value, nested objects keep their shape. */
function parseFields(text: string): (data: RecordData) => RecordData {
  const paths = text.split(',').map((part) => part.trim()).filter(Boolean).map((part) => {
    const parsed = parseFieldRef(part);
    if (!parsed.ok || parsed.field.kind !== 'data') {
      throw invalidRequest(`fields takes data paths like data.name; ${JSON.stringify(part)} is not one.`, { field: 'querystring.fields' });
    }
    return parsed.field;
  });
  if (paths.length === 0 || paths.length > 50) throw invalidRequest('fields takes 1 to 50 data paths.', { field: 'querystring.fields' });
  return (data) => {
    // Keys come from the caller: null-prototype objects, so a segment like __proto__ or
    // constructor names a field of the answer and never reaches Object.prototype.
    const picked: RecordData = Object.create(null);
    for (const field of paths) {
      const source = fieldValueOf(field, NO_COLUMNS, data);
      if (source === undefined || field.kind !== 'data') continue;
      let target: RecordData | null = picked;
      for (const segment of field.path.slice(0, -1)) {
        if (!Object.hasOwn(target, segment)) target[segment] = Object.create(null);
        const next: unknown = target[segment];
        // A shorter path already took the whole value, this one inside it included.
        target = isPicked(next) ? next : null;
        if (!target) break;
      }
      if (target) target[field.path[field.path.length - 1]!] = source;
    }
    return picked;
  };
}

/** An object parseFields made (null prototype), as opposed to a value taken from the record. */
function isPicked(value: unknown): value is RecordData {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === null;
}
