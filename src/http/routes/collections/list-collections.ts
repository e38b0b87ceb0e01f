import { Type } from 'typebox';
import { listCollections } from '../../../modules/collections/collections.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { CreatedAtSort, isNewestFirst } from '../../created-order.js';
import { decodeCursor, idPosition, page } from '../../cursor.js';
import { listOf, Paging } from '../../schemas.js';
import { Collection } from './collection-schemas.js';

export const registerListCollections: RegisterRoute = (app, deps) =>
  app.get('/v1/collections', {
    config: { operation: 'collections.list', access: needs('collections:read') },
    schema: {
      summary: 'List collections, oldest first (?sort=-createdAt: newest first); ?trashed=true lists the trash',
      tags: ['collections'],
      querystring: Type.Object({ trashed: Type.Optional(Type.Boolean()), sort: CreatedAtSort, ...Paging }, { additionalProperties: false }),
      response: { 200: listOf(Collection) },
    },
    handler: async (request) => {
      const { trashed = false, limit = 50, cursor, sort } = request.query;
      // A key restricted to collections lists only those.
      const onlyIds = request.auth.key?.collections ?? undefined;
      const rows = await listCollections(deps.db, inWorkspace(request).workspaceId, { trashed, limit: limit + 1, after: decodeCursor(cursor, idPosition('col')), newestFirst: isNewestFirst(sort), onlyIds });
      return page(rows, limit, (row) => row.id, deps.config.pageBytes);
    },
  });
