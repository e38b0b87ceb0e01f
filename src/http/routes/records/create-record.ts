import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { hashRequest } from '../../../modules/idempotency/idempotency.js';
import { createRecord } from '../../../modules/records/records.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { addFormParsers } from '../../form-submission.js';
import { withHeaders } from '../../schemas.js';
import { countSubmissionOutcome, discardUnkeptFiles, gateSubmission, handleSubmission, isAnonymousSubmission, readSubmissionForm, submissionErrorHandler } from '../../public-submission.js';
import { CollectionParams } from '../collections/collection-schemas.js';
import { DATA_EXAMPLE_BODY, RecordChangeBody, RecordData } from './record-schemas.js';

const CreateBody = Type.Object(
  {
    data: RecordData,
    captchaToken: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: "Public submissions only: the CAPTCHA widget's answer, when the collection asks for one. Ignored with a credential." })),
  },
  { additionalProperties: false, examples: [DATA_EXAMPLE_BODY] },
);

const CreateQuery = Type.Object(
  {
    redirect: Type.Optional(Type.String({ maxLength: 2048, description: 'Form submissions only: where to send the browser after the answer (303), on a refusal with ?error=CODE added. Its origin must be one of the collection\'s submission origins. A form may send it as its `redirect` field instead.' })),
  },
  { additionalProperties: false },
);

/**
 * The route has a plugin scope of its own: besides JSON it parses the forms a plain HTML page
 * sends (urlencoded, multipart), for public submissions only (form-submission.ts), and no other
 * route takes them.
 */
export const registerCreateRecord: RegisterRoute = (app, deps) =>
  void app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    await addFormParsers(scope, deps.config.submissionMaxBytes);
    const submit = handleSubmission(deps);
    scope.post('/v1/collections/:col/records', {
      config: { operation: 'records.create', access: needs('records:create', { checksKeyInStatement: true, publicSubmit: true }) },
      schema: {
        summary: 'Add a record (emits record.created); checked against the active schema version. Without a credential: a public submission (docs/data-api.md), answered with the summary only',
        tags: ['records'],
        params: CollectionParams,
        querystring: CreateQuery,
        headers: Type.Object({
          'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A repeat within 24 h returns the first response and creates nothing. Refused on a public submission.' })),
        }),
        body: CreateBody,
        response: {
          201: RecordChangeBody,
          303: withHeaders(Type.Null({ description: 'A form submission that named a redirect: sent there, with ?error=CODE on a refusal after the form was read (docs/forms.md). No body.' }), {
            Location: Type.String({ description: 'The form\'s redirect.', examples: ['https://example.com/thanks'] }),
          }),
        },
      },
      // Public submissions: the gate runs before the body is read, the count after the answer (public-submission.ts).
      preParsing: gateSubmission(deps),
      // A form body becomes {data, captchaToken} before the schema checks it; its files are stored.
      preValidation: readSubmissionForm(deps),
      errorHandler: submissionErrorHandler(),
      onResponse: [countSubmissionOutcome(deps), discardUnkeptFiles(deps)],
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
  });
