import type { FastifyRequest } from 'fastify';
import type { App } from './app-type.js';

/** Probes a supervisor or scraper sends every few seconds: logged at debug, so they do not bury the traffic. */
const PROBE_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * What a log line's `req` holds. Fastify's own `req` serializer expects the request object and
 * rebuilds `req` from it, so the route and the client address of the plain object this file logs
 * were dropped (they came out as `{ method, url }` only). This one keeps the four fields, and no
 * other: a request object logged by mistake still shows no header.
 */
export const requestLogSerializers = {
  req: (req: { method?: string; url?: string; route?: string; remoteAddress?: string }) => ({
    method: req.method,
    url: req.url,
    route: req.route,
    remoteAddress: req.remoteAddress,
  }),
};

/**
 * One log line per request, `request completed`, written when the answer has gone out: method,
 * URL (credentials cut out), route pattern, client address (`request.ip`: the one trust-proxy.ts
 * believes, the same every per-address limit counts), status and time taken. Health probes and
 * scrapes (`/healthz`, `/readyz`, `/metrics`) log it at debug instead of info. Fastify's own two
 * lines per request are switched off (`disableRequestLogging`): at the default level they cost
 * about a third of a trivial request's CPU, and the first says nothing the second does not.
 * `incoming request` is still logged at debug level, for following a request that never ends.
 * Callback hooks, added only when their level is on: above info, logging costs a request nothing.
 */
export function logRequests(app: App): void {
  // Decided once: the level is the app's for its whole life (a disabled logger has none).
  const enabled = (level: 'debug' | 'info') => (app.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.(level) ?? false;
  const debug = enabled('debug');
  const info = enabled('info');
  if (!info) return;
  if (debug) {
    app.addHook('onRequest', (request, _reply, done) => {
      request.log.debug({ req: { method: request.method, url: loggableUrl(request) } }, 'incoming request');
      done();
    });
  }
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url;
    if (route !== undefined && PROBE_ROUTES.has(route) && !debug) return done();
    const line = (route !== undefined && PROBE_ROUTES.has(route) ? request.log.debug : request.log.info).bind(request.log);
    line(
      {
        req: { method: request.method, url: loggableUrl(request), route, remoteAddress: request.ip },
        res: { statusCode: reply.statusCode },
        responseTime: reply.elapsedTime,
      },
      'request completed',
    );
    done();
  });
}

/** Values in a URL that are credentials: invite tokens in paths, keys or secrets pasted into a query. */
const SECRET_NAME = /token|secret|password/i;
const SECRET_VALUE = /^(pb_(live|test)_|whsec_)/;
/** A URL that might hold one of those (or hide one in percent-encoding); most hold none. */
const MAYBE_SECRET_URL = /%|token|secret|password|pb_(?:live|test)_|whsec_/i;
/** A route with a path parameter named like a credential (`/v1/invites/:token/accept`). */
const SECRET_PARAM_ROUTE = /:[^/]*(?:token|secret|password)/i;

/** The request's URL with credentials replaced by `[redacted]`; the URL itself when it cannot hold any. */
export function loggableUrl(request: FastifyRequest): string {
  if (!MAYBE_SECRET_URL.test(request.url) && !SECRET_PARAM_ROUTE.test(request.routeOptions.url ?? '')) return request.url;
  const [path = '', query] = request.url.split('?', 2);
  const secretParams = Object.entries((request.params ?? {}) as Record<string, unknown>)
    .filter(([name, value]) => typeof value === 'string' && value !== '' && (SECRET_NAME.test(name) || SECRET_VALUE.test(value)))
    .map(([, value]) => value as string);
  let url = path
    .split('/')
    .map((segment) => {
      const decoded = safeDecode(segment);
      return secretParams.includes(decoded) || SECRET_VALUE.test(decoded) ? '[redacted]' : segment;
    })
    .join('/');
  if (query !== undefined) {
    const safe = new URLSearchParams();
    for (const [name, value] of new URLSearchParams(query)) safe.append(name, SECRET_NAME.test(name) || SECRET_VALUE.test(value) ? '[redacted]' : value);
    url += `?${safe.toString()}`;
  }
  return url;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
