import type { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError, invalidRequest } from '../../../errors.js';
import { importRecords, importTooLarge, MAX_REPORTED_REJECTIONS, type ImportFormat } from '../../../modules/records/import-records.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { AnyObject } from '../../schemas.js';
import { CollectionParams } from '../collections/collection-schemas.js';

/** The accepted body types; the three NDJSON names are in use for the same format. */
const FORMATS: Record<string, ImportFormat> = {
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'application/jsonl': 'ndjson',
  'application/json': 'json',
  'text/csv': 'csv',
};

/**
 * The body, for the OpenAPI document. Each schema is only a description, so Fastify's validation
 * (run on the parsed body, here the raw stream) accepts anything; the parsers do the checking.
 */
const NDJSON_EXAMPLE = '{"name": "Ada Lovelace", "age": 36}\n{"name": "Grace Hopper", "age": 85}\n';

const ImportBody = {
  content: {
    // Annotations only: the body is a stream that the import parses as it arrives.
    'application/x-ndjson': { schema: { description: 'One JSON object (a record\'s data) per line.', examples: [NDJSON_EXAMPLE] } },
    'application/ndjson': { schema: { description: 'The same as application/x-ndjson.', examples: [NDJSON_EXAMPLE] } },
    'application/jsonl': { schema: { description: 'The same as application/x-ndjson.', examples: [NDJSON_EXAMPLE] } },
    'application/json': { schema: { description: 'A JSON array of objects, each one record\'s data.', examples: ['[{"name": "Ada Lovelace", "age": 36}, {"name": "Grace Hopper", "age": 85}]'] } },
    'text/csv': { schema: { description: 'A header row of field names, then one row per record; see docs/import-export.md for how cells are typed.', examples: ['name,age\nAda Lovelace,36\nGrace Hopper,85\n'] } },
  },
};

const ImportQuery = Type.Object(
  {
    mode: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('partial')], {
      default: 'all',
      description: 'all: the first refused row stops the import and nothing is kept. partial: refused rows are reported, the others kept.',
    })),
    skipColumns: Type.Optional(Type.String({
      maxLength: 2000,
      description: 'CSV only: header columns to leave out of every record, comma separated; id,createdAt,updatedAt re-imports a CSV export as it is.',
    })),
  },
  { additionalProperties: false },
);

const ImportReportBody = Type.Object({
  imported: Type.Integer({ description: 'Records created.' }),
  rejected: Type.Array(
    Type.Object({
      line: Type.Integer({ description: 'The 1-based line of the row (NDJSON, CSV) or the position of the item (JSON array).' }),
      error: Type.Object({
        code: Type.String(),
        message: Type.String(),
        details: Type.Optional(AnyObject()),
      }),
    }),
    { description: `Refused rows (mode=partial), at most the first ${MAX_REPORTED_REJECTIONS}.` },
  ),
  rejectedCount: Type.Integer({ description: 'Every refused row, including those past the list.' }),
}, {
  examples: [{
    imported: 2,
    rejected: [{ line: 3, error: { code: 'SCHEMA_VALIDATION_FAILED', message: 'The record does not match schema version 1: data.age must be integer.', details: { version: 1, errors: [{ field: 'data.age', message: 'must be integer' }] } } }],
    rejectedCount: 1,
  }],
});

/**
 * The import route lives in its own plugin scope so that its body parser (hand the request
 * stream over untouched, never buffered) applies to it alone; every other route keeps parsing
 * JSON with the app's body limit.
 */
export const registerImportRecords: RegisterRoute = (app, deps) =>
  void app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    // Every content type reaches the handler, which answers an unsupported one with a 415 that
    // lists the supported ones (Fastify's own 415 names none).
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

    scope.post('/v1/collections/:col/import', {
      // Not enforced by Fastify for a streamed body; the import counts bytes as they arrive.
      bodyLimit: deps.config.importLimitBytes,
      config: { operation: 'records.import', access: needs('records:create') },
      schema: {
        summary: 'Import records from NDJSON, a JSON array or CSV, streamed (one record.created per record)',
        description: 'Body: application/x-ndjson (also application/ndjson, application/jsonl), application/json (an array of data objects) or text/csv (a header row, then one row per record). See docs/import-export.md.',
        tags: ['records'],
        params: CollectionParams,
        querystring: ImportQuery,
        body: ImportBody,
        response: { 200: ImportReportBody },
      },
      handler: async (request, reply) => {
        const body = request.body as Readable | undefined;
        try {
          const format = formatOf(request.headers['content-type']);
          const skipColumns = columnList(request.query.skipColumns);
          if (skipColumns && format !== 'csv') throw invalidRequest('skipColumns leaves out columns of a CSV import; send text/csv.', { field: 'querystring.skipColumns' });
          const declared = Number(request.headers['content-length']);
          if (declared > deps.config.importLimitBytes) throw importTooLarge(deps.config.importLimitBytes);
          return await importRecords(deps, collectionContext(request), request.params.col, {
            format,
            mode: request.query.mode ?? 'all',
            ...(skipColumns ? { skipColumns } : {}),
            // The import may stop before the end of the body; destroying the request then would
            // reset the connection before the client reads why.
            body: body ? { [Symbol.asyncIterator]: () => body.iterator({ destroyOnReturn: false }) } : [],
          });
        } catch (error) {
          if (body && !body.readableEnded) {
            // What is left of the body is read and dropped while the error goes out; then the
            // connection closes, as Fastify does when its own body parsers give up.
            reply.header('connection', 'close');
            body.resume();
          }
          throw error;
        }
      },
    });
  });

/** `id, createdAt,updatedAt` → the names; nothing, or only commas and spaces, is no list. */
function columnList(text: string | undefined): string[] | undefined {
  const names = (text ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '');
  return names.length > 0 ? names : undefined;
}

function formatOf(contentType: string | undefined): ImportFormat {
  const [mediaType = '', ...parameters] = (contentType ?? '').split(';').map((part) => part.trim().toLowerCase());
  const format = Object.hasOwn(FORMATS, mediaType) ? FORMATS[mediaType] : undefined;
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (!format || (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')) {
    const got = contentType ? `got ${JSON.stringify(contentType)}` : 'got none';
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Send the import as application/x-ndjson, application/json or text/csv, in UTF-8 (${got}).`,
      { contentType: contentType ?? null, accepted: Object.keys(FORMATS) },
    );
  }
  return format;
}
