import { startSearchBuilds, stopSearchBuilds } from './modules/search/search-builds.js';
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type RouteOptions } from 'fastify';
import type { Deps } from './deps.js';
import { AppError } from './errors.js';
import { closeEventStreams } from './http/routes/events/stream-events.js';
import { closeHub } from './modules/events/event-hub.js';
import { newId } from './ids.js';
import { OPEN, type Access } from './http/access.js';
import type { App } from './http/app-type.js';
import { LocalAuthFailureLimiter, RedisAuthFailureLimiter, authenticateCountingFailures } from './http/auth-failures.js';
import { settleKeyGuess } from './http/auth.js';
import { setCacheHeaders } from './http/cache-headers.js';
import { corsHook } from './http/cors.js';
import { LocalSubmissionLimiter, RedisSubmissionLimiter } from './http/submission-limiter.js';
import { flushSubmissionCounts } from './modules/submissions/submission-counts.js';
import { registerDashboard } from './http/dashboard.js';
import { parseJsonBodies } from './http/json-body.js';
import { compileValidator, schemaController } from './http/route-compilers.js';
import { errorHandler, frameworkErrorHandler } from './http/error-handler.js';
import { instrument } from './http/metrics.js';
import { logRequests, requestLogSerializers } from './http/request-log.js';
import { useRateLimits } from './http/rate-limit.js';
import { connectRedis } from './http/redis-connection.js';
import { slowClientServerOptions, watchBodyProgress } from './http/slow-clients.js';
import { refuseUnstorableUrlText } from './http/storable-input.js';
import { refuseRepeatedHost } from './http/single-host.js';
import { apiRoutes } from './http/routes.js';
import { trustProxyOption } from './http/trust-proxy.js';
import { registerOperations } from './http/routes/operations/operations.js';
import { ErrorBody } from './http/schemas.js';
import { documentRoute, registerOpenApi } from './http/openapi.js';

export interface BuildAppOptions extends Deps {
  /** Pino logger options; tests pass `false` for silence. */
  logger?: boolean | Record<string, unknown>;
}

/** A declared route as the access checks see it; the access-matrix test walks these. */
export interface DeclaredRoute {
  method: string;
  url: string;
  operation: string;
  access: Access;
}

declare module 'fastify' {
  interface FastifyInstance {
    declaredRoutes: DeclaredRoute[];
  }
}

/** Builds the whole HTTP app without listening, so tests and `main` wire it the same way. */
export async function buildApp(options: BuildAppOptions): Promise<App> {
  // The caller's own object, not a copy: what it wires later (a test's resolver) reaches the routes.
  const { logger } = options;
  const deps: Deps = options;
  const app = Fastify({
    // Options passed in (tests: a stream, a level) go on top of the production ones, redaction included.
    logger: logger === undefined || logger === true ? loggerOptions(deps) : logger === false ? false : { ...loggerOptions(deps), ...logger },
    bodyLimit: deps.config.bodyLimitBytes,
    genReqId: () => newId('req'),
    // URLs the router refuses (bad percent-encoding, over-long segments) answer in our error shape too.
    frameworkErrors: frameworkErrorHandler(),
    requestIdHeader: false,
    // One line per request, written by request-log.ts, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // Which X-Forwarded-* headers to believe: request.ip is the client's address for every per-address limit and the audit log.
    trustProxy: trustProxyOption(deps.config.trustProxy),
    // Keep-alive connections must not hold a graceful shutdown open.
    forceCloseConnections: 'idle',
    // A client that sends its head or its body too slowly is cut off (slow-clients.ts).
    ...slowClientServerOptions(deps.config),
    schemaController,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  app.setValidatorCompiler(compileValidator);
  parseJsonBodies(app);
  app.decorate('declaredRoutes', [] as DeclaredRoute[]);
  app.addHook('onRoute', (route) => declareRoute(app, route));
  app.addSchema(ErrorBody);

  // Before any route is added: metrics count per route from hooks given to each as it is declared.
  logRequests(app);
  const metrics = instrument(app);
  await app.register(cookie);
  await registerOpenApi(app, deps.config);

  // Set before anything can answer, so every reply carries it, errors included; a synchronous
  // onRequest hook costs less than an async onSend hook on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onRequest', refuseRepeatedHost);
  app.addHook('onRequest', refuseUnstorableUrlText);
  app.addHook('onRequest', watchBodyProgress(deps.config));
  // What caches may keep of each answer, errors included (cache-headers.ts).
  app.decorateRequest('publicRead', false);
  app.addHook('onSend', (request, reply, payload, done) => {
    setCacheHeaders(deps.config, request, reply);
    done(null, payload);
  });
  // Cross-origin calls: preflights answered here, before authentication (cors.ts).
  app.addHook('onRequest', corsHook(deps));
  // Public submissions are counted in memory and written every 10 s and at close (submission-counts.ts).
  const flushCounts = () => flushSubmissionCounts(deps).catch((error: unknown) => app.log.error({ err: error }, 'writing submission counts failed'));
  const countFlusher = setInterval(flushCounts, 10_000).unref();
  app.addHook('onClose', async () => {
    clearInterval(countFlusher);
    await flushCounts();
  });
  // With PLAINBASE_REDIS_URL the limits are counted in Redis, shared by every process.
  const redis = deps.config.redisUrl ? await connectRedis(deps.config.redisUrl, app.log) : null;
  if (redis) app.addHook('onClose', () => redis.disconnect());
  const failuresPerIp = deps.config.authFailuresPerIp;
  app.addHook('onRequest', authenticateCountingFailures(deps, redis ? new RedisAuthFailureLimiter(failuresPerIp, redis) : new LocalAuthFailureLimiter(failuresPerIp)));
  await useRateLimits(app, deps.config, redis);
  app.decorate('submissionLimiter', redis ? new RedisSubmissionLimiter(redis) : new LocalSubmissionLimiter());
  app.setErrorHandler(errorHandler());
  app.setNotFoundHandler((request) => {
    throw new AppError('NOT_FOUND', `There is no route ${request.method} ${request.url.split('?')[0]}.`);
  });

  // The webhook sender and the file store are shared with the worker, so whoever built them closes
  // them after both stopped (closeServices in build-services.ts), not the app alone.
  // Before the server waits for open requests to end: an event stream never ends by itself.
  app.addHook('preClose', async () => {
    await closeEventStreams(deps);
    closeHub(deps);
  });
  // Search indexes left half built (the process stopped) go on once the app is ready (search-builds.ts).
  const logBuildError = (error: unknown) => app.log.error({ err: error }, 'building a search index failed');
  app.addHook('onReady', async () => startSearchBuilds(deps, logBuildError));
  app.addHook('onClose', () => stopSearchBuilds(deps));

  registerOperations(app, deps, metrics);
  for (const register of apiRoutes) register(app, deps);
  registerDashboard(app);
  return app;
}

function loggerOptions(deps: Deps) {
  return {
    level: deps.config.logLevel,
    // Credentials never reach a log line, even if a serializer starts logging headers or bodies.
    // Exact paths: a wildcard path is walked on every line, and no line carries these nested deeper.
    // Request lines carry no headers or bodies at all (request-log.ts); these catch a mistake.
    // `req` of a request line is the plain object request-log.ts writes, kept whole.
    serializers: requestLogSerializers,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', 'password', 'token', 'secret'],
  };
}

const routeErrorHandler = errorHandler();

const NO_QUERY = { type: 'object', properties: {}, additionalProperties: false } as const;

/** Every route must declare its access; error answers are documented on every route. */
function declareRoute(app: App, route: RouteOptions): void {
  route.config ??= {};
  if (!route.config.access) {
    // @fastify/swagger-ui's own pages carry no config; they are public documentation.
    if (!String(route.url).startsWith('/docs')) throw new Error(`route ${route.method} ${route.url} declares no access`);
    route.config.access = OPEN;
    route.config.operation = 'operations.docs';
    route.schema = { ...route.schema, hide: true };
  }
  const operation = route.config.operation ?? `${route.method}:${route.url}`;
  // Every API route refuses query fields it does not know (docs/design.md §2), also those that take none.
  if (String(route.url).startsWith('/v1/') && !route.schema?.querystring) route.schema = { ...route.schema, querystring: NO_QUERY };
  if (route.schema) route.schema = documentRoute(route.schema, operation, route.config.access);
  const { access } = route.config;
  // Also on the route, so that an error raised while an error answer is sent comes back to it (error-handler.ts).
  route.errorHandler ??= routeErrorHandler;
  if (access.kind === 'workspace' && access.checksKeyInStatement) route.onSend = [route.onSend ?? []].flat().concat(settleKeyGuess);
  for (const method of [route.method].flat()) {
    if (method === 'HEAD') continue;
    app.declaredRoutes.push({ method, url: route.url, operation, access: route.config.access });
  }
}
