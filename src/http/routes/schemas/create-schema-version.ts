import { Type } from 'typebox';
import { createSchemaVersion } from '../../../modules/schemas/schema-versions.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { CollectionParams } from '../collections/collection-schemas.js';
import { JSON_SCHEMA_EXAMPLE, SchemaVersion } from './schema-version-schemas.js';

export const registerCreateSchemaVersion: RegisterRoute = (app, deps) =>
  app.post('/v1/collections/:col/schemas', {
    config: { operation: 'schemas.create', access: needs('schemas:write') },
    schema: {
      summary: 'Add a schema version (JSON Schema 2020-12) as a draft; activate it to enforce it',
      tags: ['schemas'],
      params: CollectionParams,
      body: Type.Object({ schema: Type.Record(Type.String(), Type.Unknown()) }, { additionalProperties: false, examples: [{ schema: JSON_SCHEMA_EXAMPLE }] }),
      response: { 201: SchemaVersion },
    },
    handler: async (request, reply) =>
      reply.status(201).send(await createSchemaVersion(deps, collectionContext(request), request.params.col, request.body.schema)),
  });
