import { setRecordTrashed } from '../../../modules/records/records.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { sendRecordChange } from './record-answer.js';
import { RecordChangeBody, RecordParams } from './record-schemas.js';

export const registerRestoreRecord: RegisterRoute = (app, deps) =>
  app.post('/v1/collections/:col/records/:rec/restore', {
    config: { operation: 'records.restore', access: needs('records:delete') },
    schema: { summary: 'Bring a record back from the trash (emits record.restored)', tags: ['records'], params: RecordParams, response: { 200: RecordChangeBody } },
    handler: async (request, reply) => {
      return sendRecordChange(request, reply, await setRecordTrashed(deps, collectionContext(request), request.params.col, request.params.rec, false));
    },
  });
