import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { findSubmissionTarget, originAllowed } from '../modules/submissions/submit.js';
import { originListed } from '../origin-list.js';
import { isOwnOrigin } from './auth.js';

/**
 * Cross-origin calls (CORS), answered by the service itself (docs/security.md, "Calls from other
 * web pages"). Only the data API takes them: collections and everything under them (records,
 * files, schemas, indexes) and the events feed, the routes an API key is for. Pages of the
 * origins in PLAINBASE_CORS_ORIGINS may call them with a key (the Authorization header); a
 * collection that takes public submissions also lets the origins in its own list POST records
 * without one (public-submission.ts). Management routes (keys, members, webhooks, sign-in,
 * workspaces, audit, …) never answer another origin, and their preflights are refused.
 *
 * Cookies never cross: no answer carries Access-Control-Allow-Credentials, so a browser never
 * sends the session cookie on a cross-origin fetch nor lets a page read what it answered, and a
 * request from another origin that carries the cookie anyway is not served as the session
 * (auth.ts). The service's own pages (the dashboard) are same-origin and need none of this.
 */

const DATA_PATH = /^\/v1\/(collections|events)(\/|$)/;
const SUBMISSION_PATH = /^\/v1\/collections\/([^/]+)\/records\/?$/;

/** What a page may read of an answer besides the simple headers. */
export const EXPOSED_HEADERS = ['ETag', 'x-request-id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'Location'].join(', ');
const API_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
const API_HEADERS = 'authorization, content-type, if-match, if-none-match, idempotency-key, x-baas-workspace, last-event-id';
/** How long a browser may keep a preflight's answer, in seconds. */
export const MAX_AGE_SECONDS = 600;

const pathOf = (request: FastifyRequest): string => request.url.split('?')[0]!;

/** Whether a request is to the data API, whose every answer varies on Origin (cache-headers.ts adds it to Vary). */
export const isDataRequest = (request: FastifyRequest): boolean => DATA_PATH.test(pathOf(request));

export const originNotAllowed = (): AppError =>
  new AppError('ORIGIN_NOT_ALLOWED', 'Pages of this origin may not call this route: the data API answers the origins in PLAINBASE_CORS_ORIGINS, a public submission those in its collection\'s settings, and other routes none.');

/** Lets the page of `origin` read the answer. */
export function allowOrigin(reply: FastifyReply, origin: string): void {
  reply.header('access-control-allow-origin', origin);
  reply.header('access-control-expose-headers', EXPOSED_HEADERS);
}

/**
 * The onRequest hook: answers preflights (204, or 403 ORIGIN_NOT_ALLOWED) and marks the actual
 * requests of an allowed origin. Every answer of a data route varies on Origin, whoever asked,
 * so a cache never hands one origin's answer to another (set with the rest of Vary, cache-headers.ts).
 */
export function corsHook(deps: Deps) {
  // A callback hook: every request passes here, and only a submission's preflight has to wait.
  return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    const origin = request.headers.origin;
    if (origin === undefined || isOwnOrigin(deps, request, origin)) return done();
    const path = pathOf(request);
    const data = DATA_PATH.test(path);
    const requestedMethod = request.headers['access-control-request-method'];
    if (request.method !== 'OPTIONS' || requestedMethod === undefined) {
      if (data && originListed(deps.config.corsOrigins, origin)) allowOrigin(reply, origin);
      return done();
    }
    if (data && originListed(deps.config.corsOrigins, origin)) return void preflightAnswer(reply, origin, API_METHODS, API_HEADERS);
    const submission = SUBMISSION_PATH.exec(path);
    if (!submission || String(requestedMethod).toUpperCase() !== 'POST') return done(originNotAllowed());
    submissionOriginAllowed(deps, submission[1]!, origin).then((allowed) => {
      if (allowed) preflightAnswer(reply, origin, 'POST', 'content-type');
      else done(originNotAllowed());
    }, (error: Error) => done(error));
  };
}

async function submissionOriginAllowed(deps: Deps, ref: string, origin: string): Promise<boolean> {
  let collection: string;
  try {
    collection = decodeURIComponent(ref);
  } catch {
    return false;
  }
  const target = await findSubmissionTarget(deps, collection).catch(() => null);
  return target !== null && originAllowed(target.submissions, origin);
}

function preflightAnswer(reply: FastifyReply, origin: string, methods: string, headers: string): FastifyReply {
  return reply
    .code(204)
    .header('access-control-allow-origin', origin)
    .header('access-control-allow-methods', methods)
    .header('access-control-allow-headers', headers)
    .header('access-control-max-age', String(MAX_AGE_SECONDS))
    .send();
}
