import { Type } from 'typebox';
import { hashRequest } from '../../../modules/idempotency/idempotency.js';
import { createRecord } from '../../../modules/records/records.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { countSubmissionOutcome, gateSubmission, handleSubmission, isAnonymousSubmission } from '../../public-submission.js';
import { CollectionParams } from '../collections/collection-schemas.js';
import { DATA_EXAMPLE_BODY, RecordChangeBody, RecordData } from './record-schemas.js';

const CreateBody = Type.Object(
  {
    data: RecordData,
    captchaToken: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: "Public submissions only: the CAPTCHA widget's answer, when the collection asks for one. Ignored with a credential." })),
  },
  { additionalProperties: false, examples: [DATA_EXAMPLE_BODY] },
);

export const registerCreateRecord: RegisterRoute = (app, deps) => {
  const submit = handleSubmission(deps);
  return app.post('/v1/collections/:col/records', {
    config: { operation: 'records.create', access: needs('records:create', { checksKeyInStatement: true, publicSubmit: true }) },
    schema: {
      summary: 'Add a record (emits record.created); checked against the active schema version. Without a credential: a public submission (docs/data-api.md), answered with the summary only',
      tags: ['records'],
      params: CollectionParams,
      headers: Type.Object({
        'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A repeat within 24 h returns the first response and creates nothing. Refused on a public submission.' })),
      }),
      body: CreateBody,
      response: { 201: RecordChangeBody },
    },
    // Public submissions: the gate runs before the body is read, the count after the answer (public-submission.ts).
    preParsing: gateSubmission(deps),
    onResponse: countSubmissionOutcome(deps),
    handler: async (request, reply) => {
      if (isAnonymousSubmission(request)) return submit(request, reply) as never;
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
};
