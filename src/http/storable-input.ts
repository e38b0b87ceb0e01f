import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { AppError, invalidRequest } from '../errors.js';
import { unstorableTextReason } from '../storable-text.js';

/**
 * The text of a URL, checked once for every route before anything reads it (authentication
 * included, which looks a collection up by the path's name): the query string and the path's
 * parameters must be text both engines can store and compare (no NUL, no lone surrogate), and a
 * query string must be valid percent-encoded UTF-8, which Fastify's parser otherwise keeps as the
 * raw `%FF` instead of refusing. JSON bodies get the same check from their parser (json-body.ts).
 *
 * A query field is a 400 naming it; a path parameter no id or name can hold is a 404 (nothing
 * by that name can exist), as a path with bad percent-encoding is refused by the router.
 */
export function refuseUnstorableUrlText(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  try {
    const at = request.url.indexOf('?');
    if (at >= 0) checkQuery(request.url.slice(at + 1), request.query);
    checkParams(request.params);
    done();
  } catch (error) {
    done(error as Error);
  }
}

function checkParams(params: unknown): void {
  if (typeof params !== 'object' || params === null) return;
  for (const name of Object.keys(params)) {
    const value: unknown = (params as Record<string, unknown>)[name];
    const reason = typeof value === 'string' ? unstorableTextReason(value) : undefined;
    if (reason) throw new AppError('NOT_FOUND', `Nothing here can be named by this path: its ${name} ${reason}.`, { field: `params.${name}` });
  }
}

function checkQuery(raw: string, query: unknown): void {
  if (raw.includes('%')) {
    for (const pair of raw.split('&')) {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      for (const part of equals < 0 ? [pair] : [name, pair.slice(equals + 1)]) {
        if (!part.includes('%')) continue;
        try {
          decodeURIComponent(part);
        } catch {
          throw invalidRequest(`querystring.${safeName(name)} is not valid percent-encoded UTF-8.`, { field: `querystring.${safeName(name)}` });
        }
      }
    }
  }
  if (typeof query !== 'object' || query === null) return;
  for (const name of Object.keys(query)) {
    const nameReason = unstorableTextReason(name);
    if (nameReason) throw invalidRequest(`A query field name ${nameReason}.`, { field: 'querystring' });
    const value: unknown = (query as Record<string, unknown>)[name];
    for (const item of Array.isArray(value) ? value : [value]) {
      const reason = typeof item === 'string' ? unstorableTextReason(item) : undefined;
      if (reason) throw invalidRequest(`querystring.${name} ${reason}.`, { field: `querystring.${name}` });
    }
  }
}

/** A field name for a message, from raw text that may not decode. */
function safeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw.slice(0, 100);
  }
}
