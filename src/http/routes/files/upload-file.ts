import { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, invalidRequest } from '../../../errors.js';
import { checkContentType, checkFileName, DEFAULT_CONTENT_TYPE, uploadFile, type UploadInput } from '../../../modules/files/files.js';
import { fileTooLarge } from '../../../modules/files/upload-meter.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { CollectionParams } from '../collections/collection-schemas.js';
import { FileBody } from './file-schemas.js';
import { ResponseHeaders, withHeaders } from '../../schemas.js';

/**
 * The body, for the OpenAPI document. Each schema is only a description, so Fastify's validation
 * (which would run on the stream) accepts anything; the content is streamed, never parsed whole.
 */
const UploadBody = {
  content: {
    'application/octet-stream': {
      // Annotations only: the body is a stream that the upload stores as it arrives.
      schema: { description: 'The file itself, sent with its own Content-Type (image/png, application/pdf, …); name it with ?name=.', examples: ['(the file\'s bytes)'] },
    },
    'multipart/form-data': {
      schema: { description: 'A form with one file part (any field name); its file name and type are used unless ?name= says otherwise.', examples: [{ file: '(the file\'s bytes)' }] },
    },
  },
};

const UploadQuery = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'The file name. Required for a raw body; overrides a form part\'s file name.' })) },
  { additionalProperties: false },
);

/**
 * The upload route lives in its own plugin scope, with body parsers of its own: a form goes to
 * @fastify/multipart, any other type reaches the handler as the untouched request stream. Nothing
 * is buffered, and every other route keeps parsing JSON with the app's body limit.
 */
export const registerUploadFile: RegisterRoute = (app, deps) =>
  void app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    await scope.register(multipart);
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    // An answer that goes out before the body is all in (a refused key, 413, a form cut short):
    // what is left of the body is read and dropped while the answer goes out, then the connection
    // closes. The client learns why instead of meeting a reset mid-send, and no keep-alive
    // connection reads gigabytes nobody wants before its next request.
    scope.addHook('onSend', async (request, reply) => {
      const raw = request.raw;
      if (raw.readableEnded || raw.destroyed) return;
      reply.header('connection', 'close');
      raw.unpipe();
      raw.resume();
    });

    scope.post('/v1/collections/:col/files', {
      // Not enforced by Fastify for a streamed body; the upload counts bytes as they arrive.
      bodyLimit: deps.config.fileMaxBytes,
      config: { operation: 'files.upload', access: needs('files:write') },
      schema: {
        summary: 'Upload a file into a collection: the raw body (Content-Type, ?name=) or a multipart form, streamed',
        description: `Answers the file's metadata. Larger than PLAINBASE_FILE_MAX_BYTES (${deps.config.fileMaxBytes} bytes here): 413. See docs/files.md.`,
        tags: ['files'],
        params: CollectionParams,
        querystring: UploadQuery,
        body: UploadBody,
        response: { 201: withHeaders(FileBody, { Location: ResponseHeaders.location }) },
      },
      handler: async (request, reply) => {
        const input = await uploadInput(request, request.query.name, deps.config.fileMaxBytes);
        const file = await uploadFile(deps, collectionContext(request), request.params.col, input);
        return reply.status(201).header('location', `/v1/collections/${file.collectionId}/files/${file.id}`).send(file);
      },
    });
  });

/** Name, type and content stream of a raw body or of a form's first file part. */
async function uploadInput(request: FastifyRequest, queryName: string | undefined, maxBytes: number): Promise<UploadInput> {
  if (!request.isMultipart()) {
    if (Number(request.headers['content-length']) > maxBytes) throw fileTooLarge(maxBytes);
    if (queryName === undefined) throw invalidRequest('Name the file with ?name= (or send a multipart form with a file part).', { field: 'querystring.name' });
    const contentType = request.headers['content-type'] ?? DEFAULT_CONTENT_TYPE;
    return {
      name: checkFileName(queryName, 'querystring.name'),
      contentType: checkContentType(contentType, 'headers.content-type'),
      // No body at all is an empty file.
      body: (request.body as Readable | undefined) ?? Readable.from([]),
    };
  }
  let part;
  try {
    // The size limit is the upload's own (PAYLOAD_TOO_LARGE); busboy only stops a little past it.
    part = await request.file({ limits: { files: 1, fileSize: maxBytes + 1, fields: 20, fieldSize: 64 * 1024 }, throwFileSizeLimit: false });
  } catch (error) {
    throw formError(error);
  }
  if (!part) throw invalidRequest('The form has no file part.', { field: 'body' });
  // busboy reports a form that breaks off (no closing boundary) by emitting 'error' on the file
  // stream, without destroying it; the upload starts reading only after looking up the
  // collection, and a listener added then would not hear an error emitted before. Destroyed, the
  // stream keeps the error for later readers.
  part.file.once('error', (error) => part.file.destroy(error));
  const name = queryName ?? part.filename;
  if (!name) throw invalidRequest('The file part has no file name; name the file with ?name=.', { field: 'querystring.name' });
  return {
    name: checkFileName(name, queryName === undefined ? 'body.filename' : 'querystring.name'),
    contentType: checkContentType(part.mimetype || DEFAULT_CONTENT_TYPE, 'body.contentType'),
    body: part.file,
  };
}

/** A form busboy cannot read is the client's mistake (400), whatever error it raised. */
function formError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const status = (error as { statusCode?: number }).statusCode;
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'The form has more parts or fields than an upload takes.');
  return invalidRequest(`The multipart form cannot be read: ${(error as Error).message}.`, { field: 'body' });
}
