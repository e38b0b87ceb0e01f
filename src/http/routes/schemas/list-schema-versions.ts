import { Type } from 'typebox';
import { listSchemaVersions } from '../../../modules/schemas/schema-versions.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { decodeCursor, page } from '../../cursor.js';
import { listOf, Paging } from '../../schemas.js';
import { CollectionParams } from '../collections/collection-schemas.js';
import { MAX_VERSION, SchemaVersion } from './schema-version-schemas.js';

export const registerListSchemaVersions: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/schemas', {
    config: { operation: 'schemas.list', access: needs('schemas:read') },
    schema: {
      summary: "A collection's schema versions, newest first",
      tags: ['schemas'],
      params: CollectionParams,
      querystring: Type.Object({ ...Paging }, { additionalProperties: false }),
      response: { 200: listOf(SchemaVersion) },
    },
    handler: async (request) => {
      const { limit = 50, cursor } = request.query;
      // Newest first: the cursor is the last version number of the page.
      const before = decodeCursor(cursor, (position) => /^[1-9][0-9]{0,9}$/.test(position) && Number(position) <= MAX_VERSION);
      const rows = await listSchemaVersions(deps.db, inWorkspace(request).workspaceId, request.params.col, { limit: limit + 1, before: before === undefined ? undefined : Number(before) });
      return page(rows, limit, (row) => String(row.version), deps.config.pageBytes);
    },
  });
