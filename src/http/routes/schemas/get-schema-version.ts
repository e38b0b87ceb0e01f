import { getSchemaVersion } from '../../../modules/schemas/schema-versions.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { SchemaVersion, VersionParams } from './schema-version-schemas.js';

export const registerGetSchemaVersion: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/schemas/:version', {
    config: { operation: 'schemas.get', access: needs('schemas:read') },
    schema: { summary: 'One schema version', tags: ['schemas'], params: VersionParams, response: { 200: SchemaVersion } },
    handler: async (request) => getSchemaVersion(deps.db, inWorkspace(request).workspaceId, request.params.col, request.params.version),
  });
