import type { Dialect } from '../../db/dialect.js';

/**
 * A record's shape, defined once: its columns and how a new record fills them (RECORD_FIELDS, in
 * db/record-fields.ts, below the modules that use it), what each field is called where it is
 * shown, and how its value is written as JSON. The column lists of every read, the values of
 * every insert (one record or an import's batches), the record in events, the NDJSON export and
 * the JSON answers are all made from RECORD_FIELDS and the views below, so a new field is a line
 * there (and in the views that show it) plus a migration.
 *
 * The functions that turn rows into views and views into JSON (once per record of a page, an
 * export or an import, and on every write) are generated from the definition when this module
 * loads (compiledFunction): each is then the straight-line code that would be written by hand,
 * where a loop over the fields takes a call per value and about twice as long per record. Only
 * names from RECORD_FIELDS reach the generated code, each checked to be a plain identifier; no
 * input ever does. test/record-shape.test.ts holds the writers to what JSON.stringify writes.
 */

import type { ColumnOf, FieldDefinition, FieldKind, Fields, NewRecord, RecordColumn, RecordData, RecordKey, RecordsTable, StoredKey, StoredTypes } from '../../db/record-fields.js';
import { RECORD_FIELDS } from '../../db/record-fields.js';

export { RECORD_FIELDS };
export type { ColumnOf, FieldKind, NewRecord, RecordColumn, RecordData, RecordKey, RecordsTable };

/** The value of a field as the service shows it: stored types, with JSON parsed. */
type ShownTypes = Omit<StoredTypes, 'json'> & { json: RecordData };

// ---------------------------------------------------------------------------------------------
// Views: which fields are shown where, in the order they are written. Orders are part of the
// contract (answers and webhook bodies are compared byte for byte).

/** A record as answered (RecordBody in http/routes/records/record-schemas.ts). */
export const RECORD_BODY = ['id', 'collectionId', 'data', 'schemaVersion', 'files', 'createdAt', 'updatedAt', 'trashedAt'] as const satisfies readonly RecordKey[];
/** A changed record as answered to a caller that may not read records: never its content (RecordSummaryBody). */
export const RECORD_SUMMARY = ['id', 'collectionId', 'revision', 'files', 'createdAt', 'updatedAt', 'trashedAt'] as const satisfies readonly RecordKey[];
/** The record in the data of record.* events: `{"record": {…}}`. */
export const RECORD_EVENT = ['id', 'data'] as const satisfies readonly RecordKey[];
/** A line of the NDJSON export (docs/import-export.md), in its own order. */
export const RECORD_EXPORT_LINE = ['id', 'data', 'createdAt', 'updatedAt', 'schemaVersion'] as const satisfies readonly RecordKey[];
/** The first columns of the CSV export, before the data's; the header names them as here. */
export const RECORD_EXPORT_CSV = ['id', 'createdAt', 'updatedAt'] as const satisfies readonly RecordKey[];
/** The fields a filter, a sort or an index may name besides `data.<path>` (query/field-ref.ts). */
export const RECORD_QUERYABLE = ['id', 'createdAt', 'updatedAt'] as const satisfies readonly StoredKey[];

type BodyKey = (typeof RECORD_BODY)[number];
type JsonKey = { [K in RecordKey]: Fields[K]['kind'] extends 'json' ? K : never }[RecordKey];

/** A record as the service hands it to routes and events: RECORD_BODY's fields, data parsed. */
export type RecordView = { -readonly [K in BodyKey]: ShownTypes[Fields[K]['kind']] };

/**
 * A record as read for an answer: its view with each JSON field as JSON text (`dataJson`). On
 * SQLite that is the stored text itself (written by writeJson, so exactly what JSON.stringify of
 * the data gives), which a read then neither parses nor serialises again: for a page of 50
 * records that was most of the work after the query.
 */
export type RecordRead = { -readonly [K in Exclude<BodyKey, JsonKey>]: ShownTypes[Fields[K]['kind']] } & { [K in Extract<BodyKey, JsonKey> as `${K}Json`]: string };

/** A record as a caller that may not read records sees it. */
export type RecordSummary = { -readonly [K in (typeof RECORD_SUMMARY)[number]]: ShownTypes[Fields[K]['kind']] };

// ---------------------------------------------------------------------------------------------
// Columns

const isStored = (key: RecordKey): key is StoredKey => RECORD_FIELDS[key].column !== null;
export const columnOf = <K extends StoredKey>(key: K): Fields[K]['column'] => RECORD_FIELDS[key].column;

/** The columns behind `keys`, in their order, each once; fields the table does not hold have none. */
export function columnsOf<K extends RecordKey>(keys: readonly K[]): ColumnOf<K>[] {
  const columns = keys.filter((key): key is K & StoredKey => isStored(key)).map((key) => columnOf(key));
  return [...new Set(columns)] as ColumnOf<K>[];
}

/** Every column of `records`, in the order of RECORD_FIELDS: what bulk writes give (insertRows, the import). */
export const RECORD_COLUMNS: readonly RecordColumn[] = columnsOf(Object.keys(RECORD_FIELDS) as RecordKey[]);

type PinnedKey = { [K in RecordKey]: Fields[K] extends { pinned: true } ? K : never }[RecordKey];
type NullableKey = { [K in RecordKey]: Fields[K]['kind'] extends 'integerOrNull' | 'timeOrNull' ? K : never }[RecordKey];
/** The fields of an answer that are read from each row: stored, and not pinned by the query's scope. */
type RowReadKey = Exclude<Extract<BodyKey, StoredKey>, PinnedKey>;

/**
 * A row an answer is read from (toRecordRead): RECORD_LISTED_COLUMNS, of which a read may leave
 * out the nullable ones its condition pins to null (the live list reads no trashed_at).
 */
export type RecordReadRow = { [K in Exclude<RowReadKey, NullableKey> as Fields[K]['column']]: StoredTypes[Fields[K]['kind']] } & {
  [K in Extract<RowReadKey, NullableKey> as Fields[K]['column']]?: StoredTypes[Fields[K]['kind']];
};

const pinnedColumns: ReadonlySet<string> = new Set(columnsOf((Object.keys(RECORD_FIELDS) as RecordKey[]).filter((key) => 'pinned' in RECORD_FIELDS[key])));

/** The columns of a record's answer that a read of a collection's records selects: none pinned by its scope. */
export const RECORD_LISTED_COLUMNS = columnsOf(RECORD_BODY).filter((column) => !pinnedColumns.has(column)) as Fields[RowReadKey]['column'][];

/** What a read of one record selects: RECORD_LISTED_COLUMNS and the revision (its ETag). */
export const RECORD_READ_COLUMNS = [...RECORD_LISTED_COLUMNS, columnOf('revision')];

// ---------------------------------------------------------------------------------------------
// Generated readers and writers

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`record-shape: ${JSON.stringify(name)} is not a plain identifier`);
  return name;
}

/** Ids as a JSON array: they need no escaping (StoredTypes.id). */
const idsJson = (ids: readonly string[]): string => (ids.length === 0 ? '[]' : `["${ids.join('","')}"]`);

/** Generated code's pieces of a JSON text: literal text, or a JS expression that gives text. */
type Piece = string | { code: string };

/** The pieces writing the value of `expression` as JSON of its kind. */
function jsonPieces(kind: FieldKind, expression: string): Piece[] {
  switch (kind) {
    case 'id':
    case 'time':
      return ['"', { code: expression }, '"'];
    case 'timeOrNull':
      return [{ code: `(${expression} === null ? 'null' : '"' + ${expression} + '"')` }];
    case 'integer':
      return [{ code: expression }];
    case 'integerOrNull':
      return [{ code: `(${expression} === null ? 'null' : ${expression})` }];
    case 'json':
      // Already JSON text.
      return [{ code: expression }];
    case 'ids':
      return [{ code: `idsJson(${expression})` }];
  }
}

/** The pieces of `{"key":value,…}` for `keys`, each value read by the expression `valueOf` gives. */
function jsonObjectPieces(keys: readonly RecordKey[], valueOf: (key: RecordKey) => string): Piece[] {
  return [...keys.flatMap((key, index) => [`${index === 0 ? '{' : ','}"${identifier(key)}":`, ...jsonPieces(RECORD_FIELDS[key].kind, valueOf(key))]), '}'];
}

/**
 * A JS expression concatenating the pieces, adjacent literals joined: the one string expression
 * a hand-written writer would be. It starts with a literal, so every value joins a string.
 */
function concatenation(pieces: readonly Piece[]): string {
  const terms: string[] = [];
  let literal = '';
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      literal += piece;
      continue;
    }
    if (literal !== '' || terms.length === 0) terms.push(JSON.stringify(literal));
    literal = '';
    terms.push(piece.code);
  }
  if (literal !== '') terms.push(JSON.stringify(literal));
  return terms.join(' + ');
}

/** A function made from generated code, named for stack traces and profiles; `helpers` are in its scope by name. */
function compiledFunction<F>(name: string, parameters: readonly string[], body: string, helpers: Record<string, unknown> = {}): F {
  // The code is made above from RECORD_FIELDS only, never from input (see the module's comment).
  const make = new Function(...Object.keys(helpers), `'use strict'; return function ${identifier(name)}(${parameters.map(identifier).join(', ')}) { ${body} };`);
  return make(...Object.values(helpers)) as F;
}

/** The property of a RecordRead that holds a field. */
const readProperty = (key: RecordKey): string => (RECORD_FIELDS[key].kind === 'json' ? `${key}Json` : key);

/** The expression of a stored field in generated code reading `row`; nullable ones read absent as null. */
function rowValue(key: StoredKey): string {
  const { column, kind } = RECORD_FIELDS[key];
  const value = `row.${identifier(column)}`;
  return kind === 'timeOrNull' || kind === 'integerOrNull' ? `(${value} ?? null)` : value;
}

/** The expression of a new record's field in generated code reading `record` (a NewRecord). */
function createdValue(key: RecordKey): string {
  const { created } = RECORD_FIELDS[key] as FieldDefinition;
  if (created === undefined) throw new Error(`record-shape: ${key} has no value in a new record`);
  return typeof created === 'object' ? JSON.stringify(created.value) : `record.${identifier(created)}`;
}

/**
 * A record read for an answer from a row of RECORD_LISTED_COLUMNS (RecordReadRow): pinned fields
 * come from `pinned` (the scope of the query), files start empty (withAttachedFiles fills them),
 * and a nullable column the row was read without is null.
 */
export const toRecordRead: (dialect: Dialect, row: RecordReadRow, pinned: { [K in PinnedKey]: StoredTypes[Fields[K]['kind']] }) => RecordRead = compiledFunction(
  'toRecordRead',
  ['dialect', 'row', 'pinned'],
  `return { ${RECORD_BODY.map((key) => {
    const property = identifier(readProperty(key));
    if (!isStored(key)) return `${property}: []`;
    if ('pinned' in RECORD_FIELDS[key]) return `${property}: pinned.${identifier(key)}`;
    return `${property}: ${RECORD_FIELDS[key].kind === 'json' ? `dialect.jsonText(${rowValue(key)})` : rowValue(key)}`;
  }).join(', ')} };`,
);

/** The JSON of a read record, as RecordBody writes it: each JSON field goes in as the text it is. */
export const recordJson: (record: RecordRead) => string = compiledFunction(
  'recordJson',
  ['record'],
  `return ${concatenation(jsonObjectPieces(RECORD_BODY, (key) => `record.${identifier(readProperty(key))}`))};`,
  { idsJson },
);

/** A line of the NDJSON export (without its line break) from a row of RECORD_EXPORT_COLUMNS. */
export const exportLineJson: (dialect: Dialect, row: Pick<RecordsTable, ExportColumn>) => string = compiledFunction(
  'exportLineJson',
  ['dialect', 'row'],
  `return ${concatenation(jsonObjectPieces(RECORD_EXPORT_LINE, (key) => {
    if (!isStored(key)) throw new Error(`record-shape: ${key} is not stored, so not exported`);
    return RECORD_FIELDS[key].kind === 'json' ? `dialect.jsonText(${rowValue(key)})` : rowValue(key);
  }))};`,
  { idsJson },
);

/** What an export reads of each record: its line's columns and the CSV's. */
export const RECORD_EXPORT_COLUMNS = columnsOf([...RECORD_EXPORT_LINE, ...RECORD_EXPORT_CSV]);
export type ExportColumn = ColumnOf<(typeof RECORD_EXPORT_LINE)[number] | (typeof RECORD_EXPORT_CSV)[number]>;

/**
 * Puts a new record's values into `values` from `offset`, in the order of RECORD_COLUMNS (one
 * row of a bulk write: a multi-row INSERT, or a COPY on PostgreSQL, Dialect.prepareRows); returns
 * the offset after them.
 */
export const putNewRecordValues: (values: unknown[], offset: number, record: NewRecord) => number = compiledFunction(
  'putNewRecordValues',
  ['values', 'offset', 'record'],
  `${(Object.keys(RECORD_FIELDS) as RecordKey[]).filter(isStored).map((key) => `values[offset++] = ${createdValue(key)};`).join(' ')} return offset;`,
);

/** A new record's row. */
export const newRecordRow: (record: NewRecord) => RecordsTable = compiledFunction(
  'newRecordRow',
  ['record'],
  `return { ${(Object.keys(RECORD_FIELDS) as RecordKey[]).filter(isStored).map((key) => `${identifier(columnOf(key))}: ${createdValue(key)}`).join(', ')} };`,
);

/** The data of a record.* event, `{record: {id, data}}` (RECORD_EVENT), for emitEvent. */
export const recordEventData: (record: Pick<RecordView, (typeof RECORD_EVENT)[number]>) => { record: Record<string, unknown> } = compiledFunction(
  'recordEventData',
  ['record'],
  `return { record: { ${RECORD_EVENT.map((key) => `${identifier(key)}: record.${identifier(key)}`).join(', ')} } };`,
);

/**
 * The record.created event's data for a new record, as JSON text: what JSON.stringify of
 * recordEventData gives, put together around the record's data as it is stored (an import's
 * EventBatch), so the data is not serialised a second time.
 */
export const newRecordEventJson: (record: NewRecord) => string = compiledFunction(
  'newRecordEventJson',
  ['record'],
  `return ${concatenation(['{"record":', ...jsonObjectPieces(RECORD_EVENT, (key) => createdValue(key)), '}'])};`,
  { idsJson },
);

/**
 * A record's view from its whole row, files empty (withAttachedFiles fills them). `data`: the
 * record's data when the caller holds it already (a write), which then is not parsed again.
 */
export const toRecordView: (dialect: Dialect, row: RecordsTable, data?: RecordData) => RecordView = compiledFunction(
  'toRecordView',
  ['dialect', 'row', 'data'],
  `return { ${RECORD_BODY.map((key) => {
    if (!isStored(key)) return `${identifier(key)}: []`;
    const value = `row.${identifier(columnOf(key))}`;
    if (RECORD_FIELDS[key].kind !== 'json') return `${identifier(key)}: ${value}`;
    return `${identifier(key)}: ${key === 'data' ? `data !== undefined ? data : ` : ''}dialect.readJson(${value})`;
  }).join(', ')} };`,
);

/** The summary of a changed record (RECORD_SUMMARY): its view's fields and its revision. */
export function toRecordSummary(view: RecordView, revision: number): RecordSummary {
  const fields: Record<string, unknown> = { ...view, revision };
  return Object.fromEntries(RECORD_SUMMARY.map((key) => [key, fields[key]])) as RecordSummary;
}
