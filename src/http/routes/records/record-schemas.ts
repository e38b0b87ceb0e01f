import { Type } from 'typebox';
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

export const RecordBody = Type.Object({
  id: Type.String(),
  collectionId: Type.String(),
  data: RecordData,
  schemaVersion: Type.Union([Type.Integer(), Type.Null()]),
  files: Type.Array(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  trashedAt: Type.Union([Timestamp, Type.Null()]),
}, { examples: [RECORD_EXAMPLE] });

/** A record answered with its ETag (read, create). */
export const RecordWithEtag = withHeaders(RecordBody, { ETag: ResponseHeaders.etag });

/**
 * What a change answers to a caller that may not read records (records:update, records:delete or
 * files:write without records:read): which record, at which revision, never what is in it.
 */
export const RecordSummaryBody = Type.Object({
  id: Type.String(),
  collectionId: Type.String(),
  revision: Type.Integer({ description: 'The ETag without its quotes; goes up on every change.' }),
  files: Type.Array(Type.String(), { description: 'Ids of the attached files (which files:write manages), not their content.' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  trashedAt: Type.Union([Timestamp, Type.Null()]),
});

/** The answer of a change to a record, with its ETag: the record to a caller with records:read, its summary to others. */
export const RecordChangeBody = withHeaders(Type.Union([RecordBody, RecordSummaryBody], { examples: [RECORD_EXAMPLE] }), { ETag: ResponseHeaders.etag });

export const DataBody = Type.Object({ data: RecordData }, { additionalProperties: false, examples: [{ data: DATA_EXAMPLE }] });

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ description: "The record's ETag as last read; a mismatch answers 412." })),
});
