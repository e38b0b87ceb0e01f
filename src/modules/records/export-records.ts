import type { Readable } from 'node:stream';
import type { Dialect } from '../../db/dialect.js';
import type { CollectionsTable, Executor, RecordsTable } from '../../db/schema.js';
import { visitRows, type RowBatches } from '../../db/row-stream.js';
import type { Deps } from '../../deps.js';
import { invalidRequest } from '../../errors.js';
import { findCollection } from '../collections/collections.js';
import { getSchemaVersion } from '../schemas/schema-versions.js';
import { ExportSpool } from './export-spool.js';
import { cellText, csvLine } from './format-csv.js';
import { parseFieldRef } from './query/field-ref.js';
import { readAhead } from './read-ahead.js';
import { orderValues } from './query/compile.js';
import { buildListRecordsQuery, type Cursor } from './query/list.js';
import { formatSort, parseSort, type SortKey } from './query/sort-parser.js';
import { parseFilter, type FilterNode } from './query/filter-parser.js';
import { queryBudget, type QueryBudget } from './query/query-budget.js';
import { columnsOf, exportLineJson, RECORD_EXPORT_COLUMNS, RECORD_EXPORT_CSV, type ExportColumn } from './record-shape.js';

export type ExportFormat = 'ndjson' | 'csv';

export interface ExportOptions {
  format: ExportFormat;
  /** The filter language of the record list (docs/design.md §5). */
  filter?: string;
  /** CSV only: the data columns, comma separated, like `data.name,data.address.city`. */
  fields?: string;
  /** The sort language of the record list (`-data.amount,createdAt`); by default oldest first. */
  sort?: string;
}

export interface RecordExport {
  collectionName: string;
  /** The export, read from its spooled file; read it to the end or destroy it. */
  body: Readable;
}

/**
 * Records per query at most, and so per chunk of the body; a chunk also ends once it holds
 * PLAINBASE_PAGE_BYTES of records, so memory holds about one chunk however large the records.
 */
const PAGE_ROWS = 1000;
export const MAX_CSV_FIELDS = 500;

type ExportRow = Pick<RecordsTable, ExportColumn>;

/** The CSV's first columns (RECORD_EXPORT_CSV), before the data's. */
const CSV_RECORD_COLUMNS = columnsOf(RECORD_EXPORT_CSV);

interface ExportScope {
  executor: Executor;
  dialect: Dialect;
  collection: CollectionsTable;
  filter: FilterNode | undefined;
  sort: readonly SortKey[];
  /** PLAINBASE_PAGE_BYTES: the records of one chunk, in stored JSON text. */
  chunkBytes: number;
  /** How the rows of a chunk are read (read-ahead.ts). */
  batches: RowBatches;
  /** A filtered export's statements run under the caller's time budget (query/query-budget.ts). */
  budget: QueryBudget;
}

/** A CSV column after id, createdAt and updatedAt: a path into the record's data. */
interface DataColumn {
  header: string;
  path: string[];
}

/**
 * Streams a collection's records (not those in the trash) as NDJSON or CSV, oldest first or in
 * the order of `sort`. Every
 * page is read inside one snapshot (Deps.openSnapshot), so the export is exactly the records
 * that existed when it started, whatever is written meanwhile; and only about one chunk of
 * records is in memory at a time. Everything that can be refused (filter, fields, the
 * collection) is checked before the first byte, so a refusal is a proper error response.
 *
 * The snapshot is a transaction (on PostgreSQL it holds a pooled connection; on SQLite it keeps
 * the write-ahead log from being folded back), and no transaction may wait on the network: the
 * export is written to a file in the data folder under the snapshot, the snapshot closes, and the
 * file is then sent at the client's pace and removed once sent, abandoned or stalled; its bytes
 * count against the caller's and the workspace's limits meanwhile (export-spool.ts).
 */
export async function exportRecords(deps: Deps, workspaceId: string, idOrName: string, options: ExportOptions, caller: string): Promise<RecordExport> {
  const filter = options.filter === undefined ? undefined : parseFilter(options.filter);
  const sort = parseSort(options.sort);
  if (options.fields !== undefined && options.format !== 'csv') {
    throw invalidRequest('fields chooses the columns of a CSV export; NDJSON always has every field.', { field: 'querystring.fields' });
  }
  const requested = options.fields === undefined ? undefined : parseFields(options.fields);

  const spool = ExportSpool.open(deps, workspaceId, caller);
  let collectionName: string;
  try {
    const snapshot = await deps.openSnapshot();
    try {
      const collection = await findCollection(snapshot.db, workspaceId, idOrName);
      const budget = queryBudget(deps, workspaceId, 'credentialed', filter !== undefined || Boolean(options.sort?.trim()));
      const scope: ExportScope = { executor: snapshot.db, dialect: deps.dialect, collection, filter, sort, chunkBytes: deps.config.pageBytes, batches: readAhead(deps, PAGE_ROWS), budget };
      const chunks = options.format === 'ndjson' ? ndjsonChunks(scope) : csvChunks(scope, requested ?? (await defaultColumns(scope)));
      await spool.write(chunks);
      collectionName = collection.name;
    } finally {
      await snapshot.close();
    }
  } catch (error) {
    await spool.discard();
    throw error;
  }
  return { collectionName, body: spool.download() };
}

/**
 * The live records of the scope in the sort's order (by default id order, which is creation
 * order), a chunk at a time, by keyset as the record list pages (query/list.ts): up to PAGE_ROWS
 * records, fewer when the next would take the chunk past scope.chunkBytes (at least one). Rows
 * are read one by one (visitRows), so no more than the chunk is ever held.
 */
async function* recordPages(scope: ExportScope): AsyncGenerator<ExportRow[]> {
  let after: Cursor | undefined;
  const sortText = formatSort(scope.sort);
  for (;;) {
    const compiled = buildListRecordsQuery({
      executor: scope.executor,
      dialect: scope.dialect,
      workspaceId: scope.collection.workspace_id,
      collectionId: scope.collection.id,
      filter: scope.filter,
      trashed: false,
      // The budget's check goes before the filter, so that rows the filter rejects reach it too.
      budgeted: scope.budget.applies,
      sort: scope.sort,
      limit: PAGE_ROWS,
      after,
      fields: RECORD_EXPORT_COLUMNS,
    }).compile();
    const rows: ExportRow[] = [];
    let bytes = 0;
    let more = false;
    await scope.budget.run((timeLimitMs) => visitRows<ExportRow>(scope.executor, compiled, { ...scope.batches, timeLimitMs }, (row) => {
      const size = typeof row.data === 'string' ? Buffer.byteLength(row.data) : Buffer.byteLength(scope.dialect.jsonText(row.data));
      if (rows.length >= PAGE_ROWS || (rows.length > 0 && bytes + size > scope.chunkBytes)) {
        more = true;
        return false;
      }
      rows.push(row);
      bytes += size;
      return true;
    }));
    if (rows.length > 0) yield rows;
    if (!more) return;
    const last = rows[rows.length - 1]!;
    const needsData = scope.sort.some((key) => key.field.kind === 'data');
    after = { sort: sortText, values: orderValues(scope.sort, last, needsData ? scope.dialect.readJson(last.data) : undefined) as Cursor['values'] };
  }
}

/**
 * One JSON object per line, RECORD_EXPORT_LINE's fields: {id, data, createdAt, updatedAt,
 * schemaVersion}. The data goes in as its JSON text (Dialect.jsonText), as in the API's answers.
 */
async function* ndjsonChunks(scope: ExportScope): AsyncGenerator<string> {
  for await (const rows of recordPages(scope)) {
    let text = '';
    for (const row of rows) text += `${exportLineJson(scope.dialect, row)}\n`;
    yield text;
  }
}

/** A header row `id,createdAt,updatedAt,<data columns>`, then one row per record. */
async function* csvChunks(scope: ExportScope, columns: DataColumn[]): AsyncGenerator<string> {
  // The header goes out with the first page, so the first chunk has run the first query.
  let text = csvLine([...RECORD_EXPORT_CSV, ...columns.map((column) => column.header)]);
  for await (const rows of recordPages(scope)) {
    for (const row of rows) {
      const data = scope.dialect.readJson(row.data);
      text += csvLine([...CSV_RECORD_COLUMNS.map((column) => row[column]), ...columns.map((column) => cellText(valueAt(data, column.path)))]);
    }
    yield text;
    text = '';
  }
  if (text) yield text;
}

function valueAt(data: unknown, path: readonly string[]): unknown {
  let value = data;
  for (const segment of path) {
    // hasOwn: a column named like "constructor" must not reach into the prototype.
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/** `?fields=data.name,data.address.city`: data paths, each once; the header drops `data.`. */
function parseFields(text: string): DataColumn[] {
  const names = text.split(',').map((name) => name.trim());
  if (names.length > MAX_CSV_FIELDS) throw invalidRequest(`fields names at most ${MAX_CSV_FIELDS} columns.`, { field: 'querystring.fields' });
  const seen = new Set<string>();
  return names.map((name) => {
    const parsed = parseFieldRef(name);
    if (!parsed.ok || parsed.field.kind !== 'data') {
      const reason = parsed.ok ? `${name} is always one of the first three columns` : parsed.reason;
      throw invalidRequest(`fields lists data columns like data.name (${reason}).`, { field: 'querystring.fields', value: name });
    }
    if (seen.has(name)) throw invalidRequest(`fields names ${name} twice.`, { field: 'querystring.fields', value: name });
    seen.add(name);
    return { header: parsed.field.path.join('.'), path: parsed.field.path };
  });
}

/**
 * The data columns when ?fields= is not given: the top-level properties of the active schema
 * version, in its order, then every other top-level key found in the exported records, sorted
 * (jsonb does not keep key order, so order of appearance would differ between engines). Records
 * may hold fields the schema does not name (it allows them, or they were stored before it was
 * active): a column each, so that no field is lost. Finding them takes a first pass over the same
 * snapshot, so the columns fit exactly the rows that follow.
 */
async function defaultColumns(scope: ExportScope): Promise<DataColumn[]> {
  const version = scope.collection.active_schema_version;
  const named: string[] = [];
  if (version !== null) {
    const { schema } = await getSchemaVersion(scope.executor, scope.collection.workspace_id, scope.collection.id, version);
    const properties = schema.properties;
    if (typeof properties === 'object' && properties !== null) named.push(...Object.keys(properties));
  }
  const found = new Set<string>();
  for await (const rows of recordPages(scope)) {
    for (const row of rows) for (const key of Object.keys(scope.dialect.readJson(row.data) as object)) found.add(key);
  }
  for (const key of named) found.delete(key);
  return [...named, ...[...found].sort()].map((key) => ({ header: key, path: [key] }));
}
