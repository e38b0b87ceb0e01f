import { Type } from 'typebox';
import { AnyObject, EXAMPLE_TIME, exampleId, StringEnum, Timestamp } from '../../schemas.js';

/** A JSON Schema for the example records (docs/data-api.md): what a schema version holds. */
export const JSON_SCHEMA_EXAMPLE = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1 }, email: { type: 'string', format: 'email' }, age: { type: 'integer', minimum: 0 } },
  required: ['name', 'email'],
};
export const VERSION_EXAMPLE = { id: exampleId('sch'), collectionId: exampleId('col'), version: 1, state: 'active', schema: JSON_SCHEMA_EXAMPLE, createdAt: EXAMPLE_TIME };
import { CollectionRef } from '../collections/collection-schemas.js';

export const SchemaVersion = Type.Object({
  id: Type.String(),
  collectionId: Type.String(),
  version: Type.Integer(),
  state: StringEnum(['draft', 'active', 'off'], { description: 'draft: never enforced yet; active: records are checked against it; off: was active.' }),
  schema: AnyObject(),
  createdAt: Timestamp,
}, { examples: [VERSION_EXAMPLE] });

/** What switching a version answers to a caller without schemas:read: the version and its state, not its schema. */
export const SchemaVersionSummary = Type.Object({
  id: Type.String(),
  collectionId: Type.String(),
  version: Type.Integer(),
  state: SchemaVersion.properties.state,
  createdAt: Timestamp,
}, { examples: [{ id: VERSION_EXAMPLE.id, collectionId: VERSION_EXAMPLE.collectionId, version: 1, state: 'active', createdAt: EXAMPLE_TIME }] });


/** Versions are stored as 32-bit integers on both engines; a larger one cannot exist. */
export const MAX_VERSION = 2_147_483_647;
export const VersionParams = Type.Object({ col: CollectionRef, version: Type.Integer({ minimum: 1, maximum: MAX_VERSION }) });
