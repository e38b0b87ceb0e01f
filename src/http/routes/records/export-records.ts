import { Type } from 'typebox';
import { exportRecords, type ExportFormat } from '../../../modules/records/export-records.js';
import { FILTER_LIMITS } from '../../../modules/records/query/filter-parser.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { ResponseHeaders } from '../../schemas.js';
import { CollectionParams } from '../collections/collection-schemas.js';

const CONTENT_TYPES: Record<ExportFormat, string> = {
  ndjson: 'application/x-ndjson',
  csv: 'text/csv; charset=utf-8',
};

const ExportQuery = Type.Object(
  {
    format: Type.Optional(Type.Union([Type.Literal('ndjson'), Type.Literal('csv')], { default: 'ndjson' })),
    filter: Type.Optional(Type.String({ maxLength: FILTER_LIMITS.maxLength, description: 'Only the records matching it, in the filter syntax of the record list.' })),
    sort: Type.Optional(Type.String({
      maxLength: 500,
      description: 'The order of the records, in the sort syntax of the record list (like -data.amount,createdAt); ties break by id. Default: oldest first.',
    })),
    fields: Type.Optional(Type.String({
      maxLength: 20_000,
      description: 'CSV only: the data columns, like data.name,data.address.city. Default: the active schema\'s top-level properties, or every top-level key found.',
    })),
  },
  { additionalProperties: false },
);

export const registerExportRecords: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/export', {
    config: { operation: 'records.export', access: needs('records:read') },
    schema: {
      summary: "Stream a collection's records (not the trash) as NDJSON or CSV: a consistent snapshot, oldest first or sorted",
      description:
        'See docs/import-export.md. The export is written on the server before it is sent: 429 RATE_LIMITED while the caller\'s or the workspace\'s exports not yet downloaded hold too much (retry-after), 409 CONFLICT (details.limit) when this export alone is larger than that limit. A download that takes nothing for PLAINBASE_EXPORT_STALL_SECONDS is cut off.',
      tags: ['records'],
      params: CollectionParams,
      querystring: ExportQuery,
      response: {
        200: {
          description: 'NDJSON: one {id, data, createdAt, updatedAt, schemaVersion} per line. CSV: id,createdAt,updatedAt, then one column per data field.',
          headers: { 'Content-Disposition': ResponseHeaders.contentDisposition },
          content: {
            [CONTENT_TYPES.ndjson]: {
              schema: Type.String(),
              example: '{"id":"rec_01jbx3m9k6t2v8w4y7z0a5c1d3","data":{"name":"Ada Lovelace","age":36},"createdAt":"2026-11-05T10:00:00.000Z","updatedAt":"2026-11-05T10:05:00.000Z","schemaVersion":1}\n',
            },
            [CONTENT_TYPES.csv]: {
              schema: Type.String(),
              example: 'id,createdAt,updatedAt,name,age\r\nrec_01jbx3m9k6t2v8w4y7z0a5c1d3,2026-11-05T10:00:00.000Z,2026-11-05T10:05:00.000Z,Ada Lovelace,36\r\n',
            },
          },
        },
      },
    },
    handler: async (request, reply) => {
      const format = request.query.format ?? 'ndjson';
      const { collectionName, body } = await exportRecords(deps, inWorkspace(request).workspaceId, request.params.col, {
        format,
        filter: request.query.filter,
        fields: request.query.fields,
        sort: request.query.sort,
      }, request.auth.key?.key.id ?? request.auth.person?.id ?? 'anonymous');
      return reply
        .header('content-type', CONTENT_TYPES[format])
        // Collection names are [a-z0-9_]: safe inside the quoted filename as they are.
        .header('content-disposition', `attachment; filename="${collectionName}.${format}"`)
        .send(body as never);
    },
  });
