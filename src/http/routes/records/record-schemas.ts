import { Type } from 'typebox';
import { AnyObject, Timestamp } from '../../schemas.js';
import { CollectionRef } from '../collections/collection-schemas.js';

export const RecordData = AnyObject({ description: "The record's fields, a JSON object." });
export const RecordParams = Type.Object({ col: CollectionRef, rec: Type.String({ pattern: '^rec_[0-9a-z]{26}$' }) });

export const RecordBody = Type.Object({
  id: Type.String(),
  collectionId: Type.String(),
  data: RecordData,
  schemaVersion: Type.Union([Type.Integer(), Type.Null()]),
  files: Type.Array(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  trashedAt: Type.Union([Timestamp, Type.Null()]),
});

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

/** The answer of a change to a record: the record to a caller with records:read, its summary to others. */
export const RecordChangeBody = Type.Union([RecordBody, RecordSummaryBody]);

export const DataBody = Type.Object({ data: RecordData }, { additionalProperties: false });

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ description: "The record's ETag as last read; a mismatch answers 412." })),
});
