import { activateSchemaVersion, deactivateSchemaVersion } from '../../../modules/schemas/schema-versions.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { SchemaVersion, VersionParams } from './schema-version-schemas.js';

export const registerActivateSchemaVersion: RegisterRoute = (app, deps) =>
  app.post('/v1/collections/:col/schemas/:version/activate', {
    config: { operation: 'schemas.activate', access: needs('schemas:write') },
    schema: {
      summary: 'Enforce this version from now on; the previously active one goes off (emits schema.updated)',
      tags: ['schemas'],
      params: VersionParams,
      response: { 200: SchemaVersion },
    },
    handler: async (request) => activateSchemaVersion(deps, collectionContext(request), request.params.col, request.params.version),
  });

export const registerDeactivateSchemaVersion: RegisterRoute = (app, deps) =>
  app.post('/v1/collections/:col/schemas/:version/deactivate', {
    config: { operation: 'schemas.deactivate', access: needs('schemas:write') },
    schema: {
      summary: 'Switch the active version off: no schema is enforced until another is activated (emits schema.updated)',
      tags: ['schemas'],
      params: VersionParams,
      response: { 200: SchemaVersion },
    },
    handler: async (request) => deactivateSchemaVersion(deps, collectionContext(request), request.params.col, request.params.version),
  });
