import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { getFile, readFileContent } from '../../../modules/files/files.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { readScope } from '../../public-read.js';
import { contentDisposition, matchesEtag, parseRange, servedInline } from './content-headers.js';
import { FileParams } from './file-schemas.js';
import { ResponseHeaders } from '../../schemas.js';

/** No body at all: `null` would go out as the four bytes of the JSON text null. */
const NO_BODY = undefined as never;

const FILE_ETAG = Type.String({ description: 'The content\'s SHA-256, quoted: send it as If-None-Match (304 when unchanged) or If-Range.', examples: ['"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"'] });
const CONTENT_HEADERS = {
  ETag: FILE_ETAG,
  'Last-Modified': ResponseHeaders.lastModified,
  'Accept-Ranges': ResponseHeaders.acceptRanges,
  'Content-Disposition': ResponseHeaders.contentDisposition,
};

export const registerDownloadFile: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/files/:fil/content', {
    config: { operation: 'files.download', access: needs('files:read', { publicRead: true }) },
    schema: {
      summary: "A file's content, streamed, with its stored Content-Type; Range (one range) answers 206",
      description: 'Types a browser could run (HTML, SVG, JavaScript, XML, anything not known to be inert) always come as attachments. ' +
        'Anonymous callers reach the files that live records of a public collection hold. See docs/files.md.',
      tags: ['files'],
      params: FileParams,
      querystring: Type.Object(
        { download: Type.Optional(Type.Boolean({ description: 'Serve as an attachment (save, do not show) whatever the type.' })) },
        { additionalProperties: false },
      ),
      headers: Type.Object({
        range: Type.Optional(Type.String({ description: 'bytes=start-end, bytes=start- or bytes=-suffix; one range.' })),
        'if-range': Type.Optional(Type.String()),
        'if-none-match': Type.Optional(Type.String()),
      }),
      response: {
        200: { description: 'The whole content, in the type it was stored with.', headers: CONTENT_HEADERS, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
        206: {
          description: 'The range asked for; Content-Range says which.',
          headers: { ...CONTENT_HEADERS, 'Content-Range': ResponseHeaders.contentRange },
          content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
        },
        304: { description: 'If-None-Match named the current ETag.', type: 'null', headers: { ETag: FILE_ETAG } },
        416: { description: 'The range is malformed or lies past the end; Content-Range says the size. No body.', type: 'null', headers: { 'Content-Range': ResponseHeaders.unsatisfiedRange } },
      },
    },
    handler: async (request, reply) => {
      const anonymous = request.auth.workspaceId === null;
      const scope = await readScope(deps, request, request.params.col);
      const file = await getFile(deps, scope.workspaceId, scope.collection, request.params.fil, { attachedOnly: anonymous });
      const size = Number(file.size);
      const etag = `"${file.sha256}"`;
      const lastModified = new Date(file.created_at).toUTCString();
      const inline = servedInline(file.content_type) && !request.query.download;
      reply.headers({
        etag,
        'last-modified': lastModified,
        'accept-ranges': 'bytes',
        // Access can be revoked while content never changes: caches keep it, but ask each time.
        'cache-control': 'private, no-cache',
        'x-content-type-options': 'nosniff',
      });
      if (matchesEtag(request.headers['if-none-match'], etag)) return reply.status(304).send(NO_BODY);

      // If-Range: the range only if the content is still the one the client has part of.
      const ifRange = request.headers['if-range'];
      const rangeHeader = ifRange === undefined || ifRange === etag || ifRange === lastModified ? request.headers.range : undefined;
      const range = parseRange(rangeHeader, size);
      if (range.kind === 'unsatisfiable') return reply.status(416).header('content-range', `bytes */${size}`).send(NO_BODY);

      const part = range.kind === 'part' ? { start: range.start, end: range.end } : undefined;
      // HEAD answers the headers alone; Fastify would read an opened stream to its end to drop it.
      const body = request.method === 'HEAD' ? Readable.from([]) : await readFileContent(deps, file, part);
      reply.headers({
        'content-type': file.content_type,
        'content-length': String(part ? part.end - part.start + 1 : size),
        'content-disposition': contentDisposition(inline ? 'inline' : 'attachment', file.name),
        // Should a browser render an attachment anyway, nothing in it runs, and not as this origin.
        ...(inline ? {} : { 'content-security-policy': "default-src 'none'; sandbox" }),
      });
      if (part) reply.status(206).header('content-range', `bytes ${part.start}-${part.end}/${size}`);
      return reply.send(body as never);
    },
  });
