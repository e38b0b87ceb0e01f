import { Type, type TObject, type TSchema } from 'typebox';
import { RECORD_BODY, RECORD_FIELDS, RECORD_SUMMARY, type FieldKind, type RecordKey } from '../../../modules/records/record-shape.js';
import { AnyObject, EXAMPLE_LATER, EXAMPLE_TIME, exampleId, ResponseHeaders, Timestamp, withHeaders } from '../../schemas.js';
import { CollectionRef } from '../collections/collection-schemas.js';

export const RecordData = AnyObject({ description: "The record's fields, a JSON object." });
export const RecordParams = Type.Object({ col: CollectionRef, rec: Type.String({ pattern: '^rec_[0-9a-z]{26}$' }) });

const DATA_EXAMPLE = { name: 'Ada Lovelace', email: 'ada@example.com', age: 36 };
const RECORD_EXAMPLE = {
  id: exampleId('rec'),
  collectionId: exampleId('col'),
  data: DATA_EXAMPLE,
  schemaVersion: 1,
  files: [],
  createdAt: EXAMPLE_TIME,
  updatedAt: EXAMPLE_LATER,
  trashedAt: null,
};

/** The schema of each kind of a record's field (record-shape.ts); JSON fields are the record's data. */
const KIND_SCHEMAS = {
  id: Type.String(),
  json: RecordData,
  integer: Type.Integer(),
  integerOrNull: Type.Union([Type.Integer(), Type.Null()]),
  time: Timestamp,
  timeOrNull: Type.Union([Timestamp, Type.Null()]),
  ids: Type.Array(Type.String()),
} satisfies Record<FieldKind, TSchema>;

type KindSchemas = typeof KIND_SCHEMAS;
type Fields = typeof RECORD_FIELDS;

/** An object schema of a view of a record (its fields in its order), with schemas of its own for some. */
function viewSchema<K extends RecordKey, O extends Partial<Record<K, TSchema>>>(keys: readonly K[], own: O, options: Record<string, unknown> = {}) {
  const properties = Object.fromEntries(keys.map((key) => [key, own[key] ?? KIND_SCHEMAS[RECORD_FIELDS[key].kind]]));
  return Type.Object(properties as { [P in K]: P extends keyof O ? NonNullable<O[P]> : KindSchemas[Fields[P]['kind']] }, options) as TObject<{
    [P in K]: P extends keyof O ? NonNullable<O[P]> : KindSchemas[Fields[P]['kind']];
  }>;
}

/** A record: RECORD_BODY, the fields recordJson writes for reads in the same order. */
export const RecordBody = viewSchema(RECORD_BODY, {}, { examples: [RECORD_EXAMPLE] });

/** A record answered with its ETag (read, create). */
export const RecordWithEtag = withHeaders(RecordBody, { ETag: ResponseHeaders.etag });

/**
 * What a change answers to a caller that may not read records (records:update, records:delete or
 * files:write without records:read): which record, at which revision, never what is in it.
 */
export const RecordSummaryBody = viewSchema(RECORD_SUMMARY, {
  revision: Type.Integer({ description: 'The ETag without its quotes; goes up on every change.' }),
  files: Type.Array(Type.String(), { description: 'Ids of the attached files (which files:write manages), not their content.' }),
});

/** The answer of a change to a record, with its ETag: the record to a caller with records:read, its summary to others. */
export const RecordChangeBody = withHeaders(Type.Union([RecordBody, RecordSummaryBody], { examples: [RECORD_EXAMPLE] }), { ETag: ResponseHeaders.etag });

export const DATA_EXAMPLE_BODY = { data: DATA_EXAMPLE };
export const DataBody = Type.Object({ data: RecordData }, { additionalProperties: false, examples: [DATA_EXAMPLE_BODY] });

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ description: "The record's ETag as last read; a mismatch answers 412." })),
});
