import { Type } from 'typebox';
import { listKeys } from '../../../modules/keys/keys.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { CreatedAtSort, isNewestFirst } from '../../created-order.js';
import { decodeCursor, idPosition, page } from '../../cursor.js';
import { listOf, Paging } from '../../schemas.js';
import { Key, keyManager } from './key-schemas.js';

export const registerListKeys: RegisterRoute = (app, deps) =>
  app.get('/v1/keys', {
    config: { operation: 'keys.list', access: needs('keys:create-own') },
    schema: {
      summary: "Keys, oldest first (?sort=-createdAt: newest first): an owner's or admin's list has every key of the workspace, anyone else's their own",
      tags: ['keys'],
      querystring: Type.Object({ sort: CreatedAtSort, ...Paging }, { additionalProperties: false }),
      response: { 200: listOf(Key) },
    },
    handler: async (request) => {
      const { limit = 50, cursor, sort } = request.query;
      const rows = await listKeys(deps, keyManager(request), { limit: limit + 1, after: decodeCursor(cursor, idPosition('key')), newestFirst: isNewestFirst(sort) });
      return page(rows, limit, (row) => row.id, deps.config.pageBytes);
    },
  });
