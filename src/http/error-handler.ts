import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

interface ValidationIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/**
 * Turns anything thrown into an AppError: the one translation from Fastify's errors. Database
 * errors arrive translated already (src/db/db-errors.ts); any other error is INTERNAL.
 */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fastifyError.validation) return validationError(fastifyError.validation, fastifyError.validationContext ?? 'body');
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'The request body is larger than this route accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', `This route does not accept the content type ${JSON.stringify(fastifyError.message.split(': ').pop())}.`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('INVALID_REQUEST', 'The body is empty but the content type says JSON; send a JSON value.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('INVALID_REQUEST', `The body is not valid JSON: ${fastifyError.message}`);
  }
  // Other client errors raised by Fastify itself (bad JSON, bad content length, …).
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
    if (status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', 'This content type is not accepted here.');
    return new AppError('INVALID_REQUEST', fastifyError.message);
  }
  return new AppError('INTERNAL', 'Something went wrong on our side; the request id helps us find it.');
}

/** Names each field that failed, like `body.email` or `querystring.limit`. */
function validationError(issues: ValidationIssue[], context: string): AppError {
  const errors = issues.map((issue) => {
    const segments = issue.instancePath.split('/').filter(Boolean);
    const extra = issue.params.missingProperty ?? issue.params.additionalProperty;
    if (typeof extra === 'string') segments.push(extra);
    const field = [context, ...segments].join('.');
    const message =
      issue.keyword === 'additionalProperties' ? 'is not a known field' :
      issue.keyword === 'required' ? 'is required' :
      issue.message ?? 'is not valid';
    return { field, message };
  });
  const first = errors[0]!;
  return new AppError('INVALID_REQUEST', `${first.field} ${first.message}.`, { field: first.field, errors });
}

/**
 * A body whose media type no parser of the route takes (a form post: curl's -d sends
 * application/x-www-form-urlencoded) is refused by Fastify before anything reads it; the answer
 * names what was sent and what to send (docs/design.md §2: 415).
 */
function wrongMediaType(error: unknown, request: FastifyRequest): AppError | null {
  if ((error as FastifyError).code !== 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return null;
  const type = request.headers['content-type'];
  const sent = type === undefined ? 'no Content-Type' : `Content-Type ${JSON.stringify(type.split(';')[0]!.trim())}`;
  return new AppError('UNSUPPORTED_MEDIA_TYPE', `This route takes a JSON body: send it as Content-Type: application/json (this request sent ${sent}).`, {
    contentType: type ?? null,
  });
}

function sendError(appError: AppError, request: FastifyRequest, reply: FastifyReply): void {
  reply
    .status(appError.status)
    .headers(appError.headers ?? {})
    .send({
      error: {
        code: appError.code,
        message: appError.message,
        requestId: request.id,
        ...(appError.details ? { details: appError.details } : {}),
      },
    });
}

/** Requests whose error answer has been started once: a second error must not go through the hooks again. */
const answering = new WeakSet<FastifyRequest>();

/**
 * The error handler of the app and of every route (app.ts). Fastify calls a handler once per
 * reply and hands an error raised while that answer is sent (an onSend hook that reads the
 * database, failing like the handler did) to the next handler up, ending at its own default,
 * which cannot serialize our error schema and answered FST_ERR_FAILED_ERROR_SERIALIZATION. With
 * this on the route too, the second error comes back here and is answered directly, without the
 * hooks that failed, in the same shape.
 */
export function errorHandler() {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const appError = wrongMediaType(error, request) ?? toAppError(error);
    if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
    if (answering.has(request)) return answerDirectly(appError, request, reply);
    answering.add(request);
    sendError(appError, request, reply);
  };
}

/**
 * Writes the error body straight to the connection, past every hook. The connection is closed
 * after it: whatever failed twice may have left the request half read. An answer whose head has
 * gone out already can only be cut off.
 */
function answerDirectly(appError: AppError, request: FastifyRequest, reply: FastifyReply): void {
  reply.hijack();
  const raw = reply.raw;
  if (raw.headersSent || raw.destroyed) return void raw.destroy();
  const body = JSON.stringify({ error: { code: appError.code, message: appError.message, requestId: request.id } });
  raw.writeHead(appError.status, {
    ...appError.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': String(request.id),
    'cache-control': 'no-store',
    connection: 'close',
  });
  raw.end(body);
}

/**
 * For Fastify's `frameworkErrors` option: the router refuses some URLs (bad percent-encoding, a
 * path segment over maxParamLength) before any route or hook runs, and without this answers them
 * in its own shape, without a request id.
 */
export function frameworkErrorHandler() {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    reply.header('x-request-id', request.id);
    const appError =
      error.code === 'FST_ERR_BAD_URL' ? new AppError('INVALID_REQUEST', 'The URL is not valid: a part of its path is not valid percent-encoded UTF-8.', { field: 'url' }) :
      error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? new AppError('INVALID_REQUEST', 'A part of the URL path is too long.', { field: 'url' }) :
      new AppError('INVALID_REQUEST', 'The request cannot be routed.');
    sendError(appError, request, reply);
  };
}
