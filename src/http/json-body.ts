import type { FastifyInstance } from 'fastify';

/**
 * Many clients send `content-type: application/json` on every request, also on a POST or DELETE
 * that carries nothing (activate, restore, revoke). An empty body is read as no body: routes that
 * need one still answer 400 naming `body`, and a non-empty body is parsed as before (prototype
 * poisoning refused).
 */
export function readEmptyJsonAsNoBody(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined);
    else parseJson(request, body as string, done);
  });
}
