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

export const DataBody = Type.Object({ data: RecordData }, { additionalProperties: false });

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ description: "The record's ETag as last read; a mismatch answers 412." })),
});
