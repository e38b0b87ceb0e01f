import { Type } from 'typebox';
import { getRecord } from '../../../modules/records/records.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { readScope } from '../../public-read.js';
import { recordJson, sendJson } from './record-json.js';
import { RecordBody, RecordParams } from './record-schemas.js';

export const registerGetRecord: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/records/:rec', {
    config: { operation: 'records.get', access: needs('records:read', { publicRead: true }) },
    schema: {
      summary: 'A record, with its ETag; ?trashed=true also reads it from the trash',
      tags: ['records'],
      params: RecordParams,
      querystring: Type.Object({ trashed: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      response: { 200: RecordBody },
    },
    handler: async (request, reply) => {
      const scope = await readScope(deps, request, request.params.col);
      const { record, etag } = await getRecord(deps, scope.workspaceId, scope.collection, request.params.rec, { includeTrashed: request.query.trashed });
      // Serialised here (record-json.ts): the schema above documents the answer.
      return sendJson(reply.header('etag', etag), recordJson(record));
    },
  });
