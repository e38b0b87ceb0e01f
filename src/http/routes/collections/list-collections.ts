import { Type } from 'typebox';
import { listCollections } from '../../../modules/collections/collections.js';
import { countRecordsCapped, RECORD_COUNT_CAP } from '../../../modules/collections/record-counts.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { CreatedAtSort, isNewestFirst } from '../../created-order.js';
import { decodeCursor, idPosition, page } from '../../cursor.js';
import { listOf, Paging } from '../../schemas.js';
import { Collection, COLLECTION_EXAMPLE } from './collection-schemas.js';

const ListedCollection = Type.Object(
  {
    ...Collection.properties,
    recordCount: Type.Optional(Type.Integer({ description: `Only with ?counts=true: its live records (not in its trash), counted up to ${RECORD_COUNT_CAP}.` })),
    recordCountCapped: Type.Optional(Type.Boolean({ description: `Only with ?counts=true: true when it holds more than ${RECORD_COUNT_CAP} live records (recordCount then says ${RECORD_COUNT_CAP}); GET /v1/collections/{col}?contents=true counts them all.` })),
  },
  { examples: [{ ...COLLECTION_EXAMPLE, recordCount: 1200, recordCountCapped: false }] },
);

export const registerListCollections: RegisterRoute = (app, deps) =>
  app.get('/v1/collections', {
    config: { operation: 'collections.list', access: needs('collections:read') },
    schema: {
      summary: 'List collections, oldest first (?sort=-createdAt: newest first); ?trashed=true lists the trash; ?counts=true adds each one\'s record count',
      tags: ['collections'],
      querystring: Type.Object(
        {
          trashed: Type.Optional(Type.Boolean()),
          counts: Type.Optional(Type.Boolean({ description: `Also answer recordCount (live records, up to ${RECORD_COUNT_CAP}) and recordCountCapped for each collection.` })),
          sort: CreatedAtSort,
          ...Paging,
        },
        { additionalProperties: false },
      ),
      response: { 200: listOf(ListedCollection) },
    },
    handler: async (request) => {
      const { trashed = false, counts = false, limit = 50, cursor, sort } = request.query;
      const { workspaceId } = inWorkspace(request);
      // A key restricted to collections lists only those.
      const onlyIds = request.auth.key?.collections ?? undefined;
      const rows = await listCollections(deps.db, workspaceId, { trashed, limit: limit + 1, after: decodeCursor(cursor, idPosition('col')), newestFirst: isNewestFirst(sort), onlyIds });
      if (!counts) return page(rows, limit, (row) => row.id, deps.config.pageBytes);
      // Counted before the page is cut, so the page's byte budget includes the counts.
      const found = await countRecordsCapped(deps.db, workspaceId, rows.map((row) => row.id));
      const counted = rows.map((row) => ({ ...row, ...(found.get(row.id) ?? { recordCount: 0, recordCountCapped: false }) }));
      return page(counted, limit, (row) => row.id, deps.config.pageBytes);
    },
  });
