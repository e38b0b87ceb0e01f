import { Type } from 'typebox';
import { purgeRecord, setRecordTrashed } from '../../../modules/records/records.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { requireAbility } from '../../auth.js';
import { collectionContext } from '../../collection-context.js';
import { NoContent } from '../../schemas.js';
import { sendRecordChange } from './record-answer.js';
import { IfMatchHeaders, RecordChangeBody, RecordParams } from './record-schemas.js';

/** Before validation the query is raw text: `permanent=true` is what the schema turns into true. */
const permanentNeedsPurge = (query: unknown) => ((query as { permanent?: unknown } | undefined)?.permanent === 'true' ? 'records:purge' : null);

export const registerDeleteRecord: RegisterRoute = (app, deps) =>
  app.delete('/v1/collections/:col/records/:rec', {
    config: { operation: 'records.delete', access: needs('records:delete', { alsoNeeds: permanentNeedsPurge }) },
    schema: {
      summary: 'Move a record to the trash (emits record.deleted); ?permanent=true deletes it for good (a signed-in admin or owner only)',
      tags: ['records'],
      params: RecordParams,
      headers: IfMatchHeaders,
      querystring: Type.Object({ permanent: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      response: { 200: RecordChangeBody, 204: NoContent },
    },
    handler: async (request, reply) => {
      const context = collectionContext(request);
      if (request.query.permanent) {
        requireAbility(request, 'records:purge');
        await purgeRecord(deps, context, request.params.col, request.params.rec);
        return reply.status(204).send(null);
      }
      return sendRecordChange(request, reply, await setRecordTrashed(deps, context, request.params.col, request.params.rec, true, request.headers['if-match']));
    },
  });
