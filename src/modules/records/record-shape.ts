/**
 * A record's shape, defined once: its columns and how a new record fills them (RECORD_FIELDS, in
 * db/record-fields.ts, below the modules that use it), what each field is called where it is
 * shown, and how its value is written as JSON. The column lists of every read, the values of
 * every insert (one record or an import's batches), the record in events, the NDJSON export and
 * the JSON answers are all made from RECORD_FIELDS and the views below, so a new field is a line
 * there (and in the views that show it) plus a migration.
 *
 * The functions that turn rows into views and views into JSON (once per record of a page, an
 * export or an import, and on every write) are straight-line code generated from the definition
 * at build time into record-writers.ts (scripts/generate-record-writers.ts), committed and
 * re-exported here. test/record-shape.test.ts holds them to what JSON.stringify writes.
 */

import type { ColumnOf, FieldKind, Fields, NewRecord, RecordColumn, RecordData, RecordKey, RecordsTable, StoredKey, StoredTypes } from '../../db/record-fields.js';
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

export const isStored = (key: RecordKey): key is StoredKey => RECORD_FIELDS[key].column !== null;
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
// Readers and writers: straight-line code made from RECORD_FIELDS by scripts/generate-record-writers.ts
// into record-writers.ts, which is committed (test/record-writers-file.test.ts checks it is current).

/** The fields a query pins (its scope), given to toRecordRead rather than read from each row. */
export type RecordPinned = { [K in PinnedKey]: StoredTypes[Fields[K]['kind']] };

/** What an export reads of each record: its line's columns and the CSV's. */
export const RECORD_EXPORT_COLUMNS = columnsOf([...RECORD_EXPORT_LINE, ...RECORD_EXPORT_CSV]);
export type ExportColumn = ColumnOf<(typeof RECORD_EXPORT_LINE)[number] | (typeof RECORD_EXPORT_CSV)[number]>;
export type RecordExportRow = Pick<RecordsTable, ExportColumn>;

/** What a record.* event's data is made from (RECORD_EVENT). */
export type RecordEventSource = Pick<RecordView, (typeof RECORD_EVENT)[number]>;

export { exportLineJson, newRecordEventJson, newRecordRow, putNewRecordValues, recordEventData, recordJson, toRecordRead, toRecordView } from './record-writers.js';

/** The summary of a changed record (RECORD_SUMMARY): its view's fields and its revision. */
export function toRecordSummary(view: RecordView, revision: number): RecordSummary {
  const fields: Record<string, unknown> = { ...view, revision };
  return Object.fromEntries(RECORD_SUMMARY.map((key) => [key, fields[key]])) as RecordSummary;
}
