import { Type } from 'typebox';
import { EXAMPLE_TIME, exampleId, idOf, Timestamp } from '../../schemas.js';
import { CollectionRef } from '../collections/collection-schemas.js';

export const FileId = Type.String({ pattern: '^fil_[0-9a-z]{26}$', description: "The file's id (fil_…)." });
export const FileParams = Type.Object({ col: CollectionRef, fil: FileId });

export const FILE_EXAMPLE = {
  id: exampleId('fil'),
  collectionId: exampleId('col'),
  name: 'signed-contract.pdf',
  size: 48213,
  contentType: 'application/pdf',
  sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  createdAt: EXAMPLE_TIME,
  createdBy: { type: 'key', id: exampleId('key') },
};

export const FileBody = Type.Object({
  id: Type.String(),
  collectionId: Type.String(),
  name: Type.String({ description: 'The name it was uploaded with; offered as the download\'s file name.' }),
  size: Type.Integer({ description: 'In bytes.' }),
  contentType: Type.String({ description: 'As given at upload; served back as the Content-Type of the download.' }),
  sha256: Type.String({ description: 'Lowercase hex SHA-256 of the content; the download\'s ETag is this, quoted.' }),
  createdAt: Timestamp,
  createdBy: Type.Object({
    type: Type.String({ description: 'person, key, or anonymous (a public form submission)' }),
    id: Type.Union([Type.String(), Type.Null()]),
  }),
}, { examples: [FILE_EXAMPLE] });

export const AttachBody = Type.Object({ fileId: idOf('fil') }, { additionalProperties: false, examples: [{ fileId: FILE_EXAMPLE.id }] });
