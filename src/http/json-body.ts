import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { jsonRefusal } from '../accepted-json.js';
import { AppError, invalidRequest } from '../errors.js';

/**
 * The one parser of request bodies (every route but import and file upload, which read their
 * own): JSON, and nothing else. Fastify's default decodes bytes that are not UTF-8 as U+FFFD, reads any charset as
 * UTF-8 and lets 1e400 through as Infinity (stored as null); here each is refused instead, and
 * the parsed value passes jsonRefusal (depth, prototype keys, text both engines store) before
 * anything else, schema validation included, can recurse into it.
 *
 * Many clients send `content-type: application/json` on every request, also on a POST or DELETE
 * that carries nothing (activate, restore, revoke). An empty body is read as no body: routes that
 * need one still answer 400 naming `body`.
 */
export function parseJsonBodies(app: FastifyInstance): void {
  // Fastify also reads text/plain by default: this API takes JSON, so such a body is a 415.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, readJsonBody(request.headers['content-type'], body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}


export function readJsonBody(contentType: string | undefined, body: Buffer): unknown {
  const charset = charsetOf(contentType);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `JSON bodies are read as UTF-8; this one says charset=${charset}. Send it as UTF-8 (application/json; charset=utf-8, or no charset).`, {
      contentType: contentType ?? null,
    });
  }
  if (body.length === 0) return undefined;
  // Checked first: toString would turn bytes that are not UTF-8 into U+FFFD. A byte order mark is dropped.
  if (!isUtf8(body)) throw invalidRequest('The body is not valid UTF-8; JSON must be sent as UTF-8.', { field: 'body' });
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    // JSON.parse is iterative in V8: any depth parses; jsonRefusal then bounds it.
    value = JSON.parse(text);
  } catch (error) {
    throw invalidRequest(`The body is not valid JSON: ${(error as Error).message}.`, { field: 'body' });
  }
  const refusal = jsonRefusal(value, { name: 'body', envelope: 1, checkText: text.includes('\\u') });
  if (refusal) throw invalidRequest(refusal.message, { field: refusal.field, ...(refusal.limit === undefined ? {} : { limit: refusal.limit }) });
  return value;
}

/** The charset parameter of a content type, lower case and unquoted; undefined when it has none. */
function charsetOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  for (const parameter of contentType.split(';').slice(1)) {
    const at = parameter.indexOf('=');
    if (at < 0 || parameter.slice(0, at).trim().toLowerCase() !== 'charset') continue;
    return parameter.slice(at + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
  }
  return undefined;
}
