import { Type } from 'typebox';
import { listSchemaVersions } from '../../../modules/schemas/schema-versions.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { CollectionParams } from '../collections/collection-schemas.js';
import { SchemaVersion } from './schema-version-schemas.js';

export const registerListSchemaVersions: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/schemas', {
    config: { operation: 'schemas.list', access: needs('schemas:read') },
    schema: {
      summary: "A collection's schema versions, newest first",
      tags: ['schemas'],
      params: CollectionParams,
      response: { 200: Type.Object({ data: Type.Array(SchemaVersion), nextCursor: Type.Null() }) },
    },
    handler: async (request) => ({ data: await listSchemaVersions(deps.db, inWorkspace(request).workspaceId, request.params.col), nextCursor: null }),
  });
