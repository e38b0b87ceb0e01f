import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { activateSchemaVersion, deactivateSchemaVersion, type SchemaVersionView } from '../../../modules/schemas/schema-versions.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { callerMay } from '../../auth.js';
import { collectionContext } from '../../collection-context.js';
import { SchemaVersion, SchemaVersionSummary, VERSION_EXAMPLE, VersionParams } from './schema-version-schemas.js';

const SwitchedBody = Type.Union([SchemaVersion, SchemaVersionSummary], { examples: [VERSION_EXAMPLE] });

/** A key with schemas:write but not schemas:read switches versions without reading them (docs/security.md). */
function switched(request: FastifyRequest, view: SchemaVersionView) {
  if (callerMay(request, 'schemas:read')) return view;
  const { schema: _schema, ...summary } = view;
  return summary;
}

export const registerActivateSchemaVersion: RegisterRoute = (app, deps) =>
  app.post('/v1/collections/:col/schemas/:version/activate', {
    config: { operation: 'schemas.activate', access: needs('schemas:write') },
    schema: {
      summary: 'Enforce this version from now on; the previously active one goes off (emits schema.updated)',
      tags: ['schemas'],
      params: VersionParams,
      response: { 200: SwitchedBody },
    },
    handler: async (request) => switched(request, await activateSchemaVersion(deps, collectionContext(request), request.params.col, request.params.version)),
  });

export const registerDeactivateSchemaVersion: RegisterRoute = (app, deps) =>
  app.post('/v1/collections/:col/schemas/:version/deactivate', {
    config: { operation: 'schemas.deactivate', access: needs('schemas:write') },
    schema: {
      summary: 'Switch the active version off: no schema is enforced until another is activated (emits schema.updated)',
      tags: ['schemas'],
      params: VersionParams,
      response: { 200: SwitchedBody },
    },
    handler: async (request) => switched(request, await deactivateSchemaVersion(deps, collectionContext(request), request.params.col, request.params.version)),
  });
