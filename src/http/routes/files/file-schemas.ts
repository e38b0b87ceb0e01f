import { Type } from 'typebox';
import { idOf, Timestamp } from '../../schemas.js';
import { CollectionRef } from '../collections/collection-schemas.js';

export const FileId = Type.String({ pattern: '^fil_[0-9a-z]{26}$', description: "The file's id (fil_…)." });
export const FileParams = Type.Object({ col: CollectionRef, fil: FileId });

export const FileBody = Type.Object({
  id: Type.String(),
  collectionId: Type.String(),
  name: Type.String({ description: 'The name it was uploaded with; offered as the download\'s file name.' }),
  size: Type.Integer({ description: 'In bytes.' }),
  contentType: Type.String({ description: 'As given at upload; served back as the Content-Type of the download.' }),
  sha256: Type.String({ description: 'Lowercase hex SHA-256 of the content; the download\'s ETag is this, quoted.' }),
  createdAt: Timestamp,
  createdBy: Type.Object({
    type: Type.String({ description: 'person or key' }),
    id: Type.Union([Type.String(), Type.Null()]),
  }),
});

export const AttachBody = Type.Object({ fileId: idOf('fil') }, { additionalProperties: false });
