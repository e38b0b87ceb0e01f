import { Type } from 'typebox';
import { getRecord } from '../../../modules/records/records.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { readScope, trashNeedsCredential } from '../../public-read.js';
import { recordJson } from '../../../modules/records/record-shape.js';
import { sendJson } from './record-json.js';
import { RecordParams, RecordWithEtag } from './record-schemas.js';

export const registerGetRecord: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/records/:rec', {
    config: { operation: 'records.get', access: needs('records:read', { publicRead: true, checksKeyInStatement: true }) },
    schema: {
      summary: 'A record, with its ETag; ?trashed=true also reads it from the trash',
      tags: ['records'],
      params: RecordParams,
      querystring: Type.Object({ trashed: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      response: { 200: RecordWithEtag },
    },
    handler: async (request, reply) => {
      const anonymous = request.auth.workspaceId === null;
      if (anonymous && request.query.trashed) throw trashNeedsCredential();
      const scope = await readScope(deps, request, request.params.col);
      // Read from the trash too for an anonymous caller, so that a trashed record is refused as
      // the trash is (401), not as a missing one that a credential would find.
      const { record, etag } = await getRecord(deps, scope.workspaceId, scope.collection, request.params.rec, { includeTrashed: anonymous || request.query.trashed, guess: request.auth.guess });
      if (anonymous && record.trashedAt !== null) throw trashNeedsCredential();
      // Serialised by recordJson, made from the same fields as the schema above (record-shape.ts).
      return sendJson(reply.header('etag', etag), recordJson(record));
    },
  });
