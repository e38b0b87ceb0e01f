import { Type } from 'typebox';
import { listRecords } from '../../../modules/records/list-records.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { readScope, trashNeedsCredential } from '../../public-read.js';
import { listOf, Paging } from '../../schemas.js';
import { CollectionParams } from '../collections/collection-schemas.js';
import { recordPageJson, sendJson } from './record-json.js';
import { RecordBody } from './record-schemas.js';

const RecordPage = listOf(RecordBody);

export const registerListRecords: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/records', {
    config: { operation: 'records.list', access: needs('records:read', { publicRead: true, checksKeyInStatement: true }) },
    schema: {
      summary: 'Query records: filter, sort, page by cursor; ?trashed=true lists the trash',
      tags: ['records'],
      params: CollectionParams,
      querystring: Type.Object(
        {
          filter: Type.Optional(Type.String({ maxLength: 4096, description: 'Like data.age >= 18 && (data.status = "open" || data.vip = true); see docs/queries.md.' })),
          sort: Type.Optional(Type.String({ maxLength: 500, description: 'Comma list, - for descending: -createdAt,data.name. Default: oldest first.' })),
          fields: Type.Optional(Type.String({ maxLength: 2000, description: 'Only these data paths in each record: data.name,data.address.city' })),
          search: Type.Optional(Type.String({ maxLength: 1000, description: 'Full-text search in the collection\'s settings.searchFields: words (all must match), "quoted phrases", prefix*. Best match first unless sort is given; combines with filter. 400 without searchFields, 409 while the index is being built; see docs/queries.md, Search.' })),
          count: Type.Optional(Type.Boolean({ description: 'Also answer `total`, the number of matching records.' })),
          trashed: Type.Optional(Type.Boolean()),
          ...Paging,
        },
        { additionalProperties: false },
      ),
      response: { 200: Type.Object({ ...RecordPage.properties, total: Type.Optional(Type.Integer({ description: 'Only with ?count=true: how many records match.' })) }, { examples: (RecordPage as { examples?: unknown[] }).examples }) },
    },
    handler: async (request, reply) => {
      if (request.auth.workspaceId === null && request.query.trashed) throw trashNeedsCredential();
      const scope = await readScope(deps, request, request.params.col);
      const { limit = 50, ...query } = request.query;
      // Serialised by recordPageJson, made from the same fields as the schema above (record-shape.ts).
      const caller = request.auth.workspaceId === null ? 'anonymous' : 'credentialed';
      return sendJson(reply, recordPageJson(await listRecords(deps, scope.workspaceId, scope.collection, { ...query, limit }, request.auth.guess, caller)));
    },
  });
