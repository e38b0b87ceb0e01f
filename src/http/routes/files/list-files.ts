import { Type } from 'typebox';
import { listFiles } from '../../../modules/files/list-files.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { CreatedAtSort, isNewestFirst } from '../../created-order.js';
import { decodeCursor, idPosition, page } from '../../cursor.js';
import { listOf, Paging } from '../../schemas.js';
import { CollectionParams } from '../collections/collection-schemas.js';
import { FILE_EXAMPLE, FileBody } from './file-schemas.js';

/**
 * The files of a collection, for the dashboard's file browser and for programs. Not a public read:
 * a public collection shows its attached files one by one, never the list of everything uploaded.
 */
export const registerListFiles: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/files', {
    config: { operation: 'files.list', access: needs('files:read') },
    schema: {
      summary: "A collection's files, oldest first (?sort=-createdAt: newest first), with how many records each is attached to",
      tags: ['files'],
      params: CollectionParams,
      querystring: Type.Object({ sort: CreatedAtSort, ...Paging }, { additionalProperties: false }),
      response: {
        200: listOf(Type.Object(
          { ...FileBody.properties, attachedTo: Type.Integer({ description: 'How many records it is attached to.' }) },
          { examples: [{ ...FILE_EXAMPLE, attachedTo: 1 }] },
        )),
      },
    },
    handler: async (request) => {
      const { limit = 50, cursor, sort } = request.query;
      const after = decodeCursor(cursor, idPosition('fil'));
      const rows = await listFiles(deps.db, inWorkspace(request).workspaceId, request.params.col, { limit: limit + 1, after, newestFirst: isNewestFirst(sort) });
      return page(rows, limit, (row) => row.id, deps.config.pageBytes);
    },
  });
