/**
 * The columns of the `records` table, defined once: each field of a record, the column that holds
 * it (none for a field kept elsewhere), its kind, and how a new record fills it. The table's
 * Kysely type (schema.ts) is made from it, and so are the record module's column lists, inserts
 * and JSON writers (modules/records/record-shape.ts), so a new column is a line here plus a
 * migration; test/record-shape.test.ts checks it against the migrated table on both engines.
 */

/** The value of a field as the database driver gives it, by kind. */
export interface StoredTypes {
  /** Plainbase's own text (a prefix, `_` and a ULID): nothing in it needs escaping in JSON. */
  id: string;
  /** A JSON object: jsonb on PostgreSQL (read back parsed), JSON text on SQLite; see Dialect.readJson. */
  json: unknown;
  integer: number;
  integerOrNull: number | null;
  /** An ISO 8601 time in UTC with milliseconds (toISOString): nothing to escape either. */
  time: string;
  timeOrNull: string | null;
  /** Ids of Plainbase's own; not a column of `records`. */
  ids: string[];
}

export type RecordData = Record<string, unknown>;


export type FieldKind = keyof StoredTypes;

/** What a new record is made of; each column takes one of these, or a constant (FieldDefinition.created). */
export interface NewRecord {
  id: string;
  workspaceId: string;
  collectionId: string;
  /** The data as stored: writeJson's text. */
  dataJson: string;
  schemaVersion: number | null;
  /** When it was created, as toISOString gives it. */
  at: string;
}

export interface FieldDefinition {
  /** Its column in `records`, or null for a field the table does not hold. */
  column: string | null;
  kind: FieldKind;
  /** A new record's value: the NewRecord property it comes from, or a constant. */
  created?: keyof NewRecord | { value: number | null };
  /**
   * Known from the query's scope, so reads of a collection's records take it as an argument
   * instead of selecting it once per row.
   */
  pinned?: true;
}

/**
 * Every field of a record. A new column goes here with its kind and its value in a new record,
 * then into the views that show it; its migration goes to src/db/migrations.
 */
export const RECORD_FIELDS = {
  id: { column: 'id', kind: 'id', created: 'id' },
  /** The tenant: in the condition of every query, never shown. */
  workspaceId: { column: 'workspace_id', kind: 'id', created: 'workspaceId' },
  collectionId: { column: 'collection_id', kind: 'id', created: 'collectionId', pinned: true },
  data: { column: 'data', kind: 'json', created: 'dataJson' },
  schemaVersion: { column: 'schema_version', kind: 'integerOrNull', created: 'schemaVersion' },
  /** Goes up by one on every change; quoted, it is the ETag. */
  revision: { column: 'revision', kind: 'integer', created: { value: 1 } },
  /** The attached files' ids, oldest attachment first: held by record_files (files/attached-files.ts). */
  files: { column: null, kind: 'ids' },
  createdAt: { column: 'created_at', kind: 'time', created: 'at' },
  updatedAt: { column: 'updated_at', kind: 'time', created: 'at' },
  trashedAt: { column: 'trashed_at', kind: 'timeOrNull', created: { value: null } },
} as const satisfies Record<string, FieldDefinition>;

export type Fields = typeof RECORD_FIELDS;
export type RecordKey = keyof Fields;
/** The fields the table holds. */
export type StoredKey = { [K in RecordKey]: Fields[K]['column'] extends string ? K : never }[RecordKey];
export type RecordColumn = Fields[StoredKey]['column'];
/** The columns behind some fields (none for a field the table does not hold). */
export type ColumnOf<K extends RecordKey> = K extends StoredKey ? Fields[K]['column'] : never;

/** A row of `records` as Kysely reads and writes it (db/schema.ts). */
export type RecordsTable = { -readonly [K in StoredKey as Fields[K]['column']]: StoredTypes[Fields[K]['kind']] };
