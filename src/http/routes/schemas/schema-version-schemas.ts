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


/** Versions are stored as 32-bit integers on both engines; a larger one cannot exist. */
export const MAX_VERSION = 2_147_483_647;
export const VersionParams = Type.Object({ col: CollectionRef, version: Type.Integer({ minimum: 1, maximum: MAX_VERSION }) });
