import { Type } from 'typebox';
import { hashRequest } from '../../../modules/idempotency/idempotency.js';
import { createRecord } from '../../../modules/records/records.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { CollectionParams } from '../collections/collection-schemas.js';
import { DataBody, RecordWithEtag } from './record-schemas.js';

export const registerCreateRecord: RegisterRoute = (app, deps) =>
  app.post('/v1/collections/:col/records', {
    config: { operation: 'records.create', access: needs('records:create', { checksKeyInStatement: true }) },
    schema: {
      summary: 'Add a record (emits record.created); checked against the active schema version',
      tags: ['records'],
      params: CollectionParams,
      headers: Type.Object({
        'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A repeat within 24 h returns the first response and creates nothing.' })),
      }),
      body: DataBody,
      response: { 201: RecordWithEtag },
    },
    handler: async (request, reply) => {
      const context = collectionContext(request);
      const key = request.headers['idempotency-key'];
      const idempotency = key === undefined ? undefined : {
        workspaceId: context.workspaceId,
        callerId: context.actor.id ?? 'anonymous',
        key,
        requestHash: hashRequest('POST', `/v1/collections/${request.params.col}/records`, request.body),
      };
      const { status, body, etag } = await createRecord(deps, context, request.params.col, request.body.data, { idempotency, guess: request.auth.guess });
      if (etag) reply.header('etag', etag);
      return reply.status(status as 201).send(body as never);
    },
  });
