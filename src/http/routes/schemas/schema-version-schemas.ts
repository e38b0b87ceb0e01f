import { Type } from 'typebox';
import { AnyObject, Timestamp } from '../../schemas.js';
import { CollectionRef } from '../collections/collection-schemas.js';

export const SchemaVersion = Type.Object({
  id: Type.String(),
  collectionId: Type.String(),
  version: Type.Integer(),
  state: Type.Union([Type.Literal('draft'), Type.Literal('active'), Type.Literal('off')]),
  schema: AnyObject(),
  createdAt: Timestamp,
});

/** What switching a version answers to a caller without schemas:read: the version and its state, not its schema. */
export const SchemaVersionSummary = Type.Object({
  id: Type.String(),
  collectionId: Type.String(),
  version: Type.Integer(),
  state: SchemaVersion.properties.state,
  createdAt: Timestamp,
});

export const VersionParams = Type.Object({ col: CollectionRef, version: Type.Integer({ minimum: 1 }) });
