import { Type } from 'typebox';
import { attachFile, detachFile } from '../../../modules/attachments/attachments.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { CollectionRef } from '../collections/collection-schemas.js';
import { sendRecordChange } from '../records/record-answer.js';
import { RecordChangeBody, RecordParams } from '../records/record-schemas.js';
import { AttachBody, FileId } from './file-schemas.js';

export const registerAttachFile: RegisterRoute = (app, deps) =>
  app.post('/v1/collections/:col/records/:rec/files', {
    config: { operation: 'files.attach', access: needs('files:write') },
    schema: {
      summary: 'Attach a file of the same collection to a record (emits record.updated); answers the record',
      tags: ['files'],
      params: RecordParams,
      body: AttachBody,
      response: { 200: RecordChangeBody },
    },
    handler: async (request, reply) => {
      return sendRecordChange(request, reply, await attachFile(deps, collectionContext(request), request.params.col, request.params.rec, request.body.fileId));
    },
  });

export const registerDetachFile: RegisterRoute = (app, deps) =>
  app.delete('/v1/collections/:col/records/:rec/files/:fil', {
    config: { operation: 'files.detach', access: needs('files:write') },
    schema: {
      summary: 'Detach a file from a record (emits record.updated); the file stays. Answers the record',
      tags: ['files'],
      params: Type.Object({ col: CollectionRef, rec: RecordParams.properties.rec, fil: FileId }),
      response: { 200: RecordChangeBody },
    },
    handler: async (request, reply) => {
      return sendRecordChange(request, reply, await detachFile(deps, collectionContext(request), request.params.col, request.params.rec, request.params.fil));
    },
  });
