import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { presentsCredential, WORKSPACE_HEADER } from './auth.js';
import { isDataRequest } from './cors.js';

/**
 * What a cache (a browser's, or a shared one: a CDN, a reverse proxy) may keep of an answer.
 * One rule for every answer (docs/security.md, "Caching"):
 * - A request with a credential (an API key or a session cookie): `private, no-store`, whatever
 *   the route; its answer is the caller's alone and is never kept anywhere.
 * - An anonymous read of a public collection (public-read.ts): it varies on every header that
 *   selects or could change it, and a shared cache may keep it for PLAINBASE_PUBLIC_MAX_AGE
 *   seconds (0, the default: `no-cache`, it must ask again each time).
 * - Any other anonymous answer, errors included: `no-store`.
 * Outside /v1, a route that set its own Cache-Control keeps it: the dashboard's page and hashed
 * assets and /docs are the same for every caller, so a credential changes nothing in them.
 */

/** The headers that choose what a public read answers: the workspace a name is looked up in, and the credentials that would turn it into a private read. */
export const PUBLIC_READ_VARY = [WORKSPACE_HEADER, 'Authorization', 'Cookie', 'Origin'];
/** What every other answer of the data API varies on. */
const CORS_VARY = ['Origin'];

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by readScope when an anonymous caller reads a public collection. */
    publicRead: boolean;
  }
}

export function setCacheHeaders(config: Pick<Config, 'publicMaxAgeSeconds' | 'publicUrl'>, request: FastifyRequest, reply: FastifyReply): void {
  const own = reply.getHeader('cache-control');
  const api = request.url.startsWith('/v1/');
  if (request.publicRead) reply.header('vary', mergedVary(reply.getHeader('vary'), PUBLIC_READ_VARY));
  // The data API answers pages of other origins (cors.ts): what it answers depends on the Origin.
  else if (isDataRequest(request)) reply.header('vary', mergedVary(reply.getHeader('vary'), CORS_VARY));
  // A request refused before its cookies were read (a malformed URL) presents no session.
  if (request.headers.authorization !== undefined || (request.cookies !== undefined && presentsCredential(config, request))) {
    if (api || own === undefined) reply.header('cache-control', 'private, no-store');
    return;
  }
  if (own !== undefined && !(api && reply.statusCode >= 400)) return;
  if (request.publicRead && reply.statusCode < 400) {
    const maxAge = config.publicMaxAgeSeconds;
    reply.header('cache-control', maxAge > 0 ? `public, max-age=${maxAge}` : 'no-cache');
    return;
  }
  reply.header('cache-control', 'no-store');
}

/** `existing` with each of `names` added once (header names compare without case); `*` stays `*`. */
export function mergedVary(existing: string | number | string[] | undefined, names: readonly string[]): string {
  const listed = (Array.isArray(existing) ? existing.join(',') : String(existing ?? '')).split(',').map((name) => name.trim()).filter(Boolean);
  if (listed.includes('*')) return '*';
  const seen = new Set(listed.map((name) => name.toLowerCase()));
  for (const name of names) {
    if (seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    listed.push(name);
  }
  return listed.join(', ');
}
