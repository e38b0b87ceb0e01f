import { updateRecord } from '../../../modules/records/records.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { sendRecordChange } from './record-answer.js';
import { DataBody, IfMatchHeaders, RecordChangeBody, RecordParams } from './record-schemas.js';

/** PATCH merges (JSON Merge Patch) and PUT replaces: one registration per method. */
const registerUpdate = (method: 'PATCH' | 'PUT'): RegisterRoute => (app, deps) =>
  app.route({
    method,
    url: '/v1/collections/:col/records/:rec',
    config: { operation: method === 'PATCH' ? 'records.merge' : 'records.replace', access: needs('records:update') },
    schema: {
      summary: method === 'PATCH'
        ? "Merge into a record's data (JSON Merge Patch: null removes a field); emits record.updated"
        : "Replace a record's data; emits record.updated",
      tags: ['records'],
      params: RecordParams,
      headers: IfMatchHeaders,
      body: DataBody,
      response: { 200: RecordChangeBody },
    },
    handler: async (request, reply) => {
      const changed = await updateRecord(deps, collectionContext(request), request.params.col, request.params.rec, {
        data: request.body.data,
        mode: method === 'PATCH' ? 'merge' : 'replace',
        ifMatch: request.headers['if-match'],
      });
      return sendRecordChange(request, reply, changed);
    },
  });

export const registerMergeRecord = registerUpdate('PATCH');
export const registerReplaceRecord = registerUpdate('PUT');
