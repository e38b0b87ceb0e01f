import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { type FastifyRequest, type RouteOptions } from 'fastify';
import type { Deps } from './deps.js';
import { AppError } from './errors.js';
import { closeEventStreams } from './http/routes/events/stream-events.js';
import { closeHub } from './modules/events/event-hub.js';
import { closeSender } from './delivery/guard-options.js';
import { closeFileStore } from './storage/store-for.js';
import { newId } from './ids.js';
import { OPEN, type Access } from './http/access.js';
import type { App } from './http/app-type.js';
import { AuthFailureLimiter, authenticateCountingFailures } from './http/auth-failures.js';
import { registerDashboard } from './http/dashboard.js';
import { parseJsonBodies } from './http/json-body.js';
import { errorHandler, frameworkErrorHandler } from './http/error-handler.js';
import { instrument } from './http/metrics.js';
import { useRateLimits } from './http/rate-limit.js';
import { refuseUnstorableUrlText } from './http/storable-input.js';
import { apiRoutes } from './http/routes.js';
import { trustProxyOption } from './http/trust-proxy.js';
import { registerOperations } from './http/routes/operations/operations.js';
import { ErrorBody } from './http/schemas.js';
import { WORKSPACE_HEADER } from './http/auth.js';
import { Type } from 'typebox';

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
    // Which X-Forwarded-* headers to believe: request.ip is the client's address for every per-address limit and the audit log.
    trustProxy: trustProxyOption(deps.config.trustProxy),
    // Keep-alive connections must not hold a graceful shutdown open.
    forceCloseConnections: 'idle',
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  useStrictValidation(app);
  parseJsonBodies(app);
  app.decorate('declaredRoutes', [] as DeclaredRoute[]);
  app.addHook('onRoute', (route) => declareRoute(app, route));
  app.addSchema(ErrorBody);

  await app.register(cookie);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Plainbase API',
        version: '1',
        description: 'Collections of JSON records with versioned schemas and files, scoped API keys and signed webhooks.',
      },
      servers: [{ url: deps.config.publicUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'pb_live_… or pb_test_… API key' },
          session: { type: 'apiKey', in: 'cookie', name: 'plainbase_session' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  const metrics = instrument(app);
  // Set before anything can answer, so every reply carries it, errors included; a synchronous
  // onRequest hook costs less than an async onSend hook on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onRequest', refuseUnstorableUrlText);
  app.addHook('onRequest', authenticateCountingFailures(deps, new AuthFailureLimiter(deps.config.authFailuresPerIp)));
  await useRateLimits(app, deps.config);
  app.setErrorHandler(errorHandler());
  app.setNotFoundHandler((request) => {
    throw new AppError('NOT_FOUND', `There is no route ${request.method} ${request.url.split('?')[0]}.`);
  });

  // The webhook connection pool and the file store's connections belong to the app: closed with it.
  app.addHook('onClose', () => closeSender(deps));
  app.addHook('onClose', () => closeFileStore(deps));
  // Before the server waits for open requests to end: an event stream never ends by itself.
  app.addHook('preClose', async () => {
    await closeEventStreams(deps);
    closeHub(deps);
  });

  registerOperations(app, deps, metrics);
  for (const register of apiRoutes) register(app, deps);
  registerDashboard(app);
  return app;
}

function loggerOptions(deps: Deps) {
  return {
    level: deps.config.logLevel,
    // Credentials never reach a log line, even if a serializer starts logging headers or bodies.
    redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.token', '*.secret'],
    serializers: { req: serializeRequest },
  };
}

/** Values in a URL that are credentials: invite tokens in paths, keys or secrets pasted into a query. */
const SECRET_NAME = /token|secret|password/i;
const SECRET_VALUE = /^(pb_(live|test)_|whsec_)/;

/** Fastify's request log fields, with credentials carried in the URL replaced by `[redacted]`. */
function serializeRequest(request: FastifyRequest) {
  const [path = '', query] = request.url.split('?', 2);
  const secretParams = Object.entries((request.params ?? {}) as Record<string, unknown>)
    .filter(([name, value]) => typeof value === 'string' && value !== '' && (SECRET_NAME.test(name) || SECRET_VALUE.test(value)))
    .map(([, value]) => value as string);
  const safePath = path
    .split('/')
    .map((segment) => {
      const decoded = safeDecode(segment);
      return secretParams.includes(decoded) || SECRET_VALUE.test(decoded) ? '[redacted]' : segment;
    })
    .join('/');
  let url = safePath;
  if (query !== undefined) {
    const safe = new URLSearchParams();
    for (const [name, value] of new URLSearchParams(query)) safe.append(name, SECRET_NAME.test(name) || SECRET_VALUE.test(value) ? '[redacted]' : value);
    url += `?${safe.toString()}`;
  }
  return { method: request.method, url, route: request.routeOptions?.url, remoteAddress: request.ip };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Fastify's default Ajv drops unknown fields and coerces types in bodies; we refuse both, so a
 * misspelt field or a string where a number belongs is a 400 naming it. Query strings and path
 * parameters are text on the wire, so those are coerced.
 */
function useStrictValidation(app: App): void {
  // ownProperties: a body's fields are its own; nothing on a prototype counts as sent.
  const common = { allErrors: false, useDefaults: true, removeAdditional: false, strict: false, ownProperties: true } as const;
  const body = addFormats.default(new Ajv.default({ ...common, coerceTypes: false }));
  const other = addFormats.default(new Ajv.default({ ...common, coerceTypes: 'array' }));
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : other).compile(schema));
}

const RESPONSE_WORDS: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No content', 206: 'Part of the content (Range)' };

/** Every answer of the document says what it is, instead of "Default Response". */
function describeResponses(responses: Record<string, object>): Record<string, object> {
  const described: Record<string, object> = {};
  for (const [status, schema] of Object.entries(responses)) {
    described[status] = 'description' in schema || '$ref' in schema ? schema : { ...schema, description: RESPONSE_WORDS[status] ?? `Status ${status}` };
  }
  return described;
}

/**
 * The credentials each operation takes, for the OpenAPI document (and so for "Try it out" on
 * /docs): an API key, a session cookie, or none; and, for a session in a workspace, the
 * x-baas-workspace header as a parameter.
 */
function documentedCredentials(access: Access): { security: Record<string, string[]>[]; headers?: object } {
  switch (access.kind) {
    case 'open':
      return { security: [] };
    case 'person':
      return { security: [{ session: [] }] };
    default: {
      const anonymous = access.kind === 'workspace' && access.publicRead ? [{}] : [];
      return {
        security: [{ apiKey: [] }, { session: [] }, ...anonymous],
        headers: Type.Object({
          [WORKSPACE_HEADER]: Type.Optional(Type.String({
            description: 'The workspace, for a signed-in person (session) or an anonymous read of a public collection by name: ws_…. An API key carries its own workspace.',
          })),
        }),
      };
    }
  }
}

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
  if (route.schema?.response) {
    route.schema.response = { ...describeResponses(route.schema.response as Record<string, object>), '4xx': { $ref: 'Error#' }, '5xx': { $ref: 'Error#' } };
  }
  if (route.schema) route.schema = { ...route.schema, operationId: operation, ...documentedCredentials(route.config.access) };
  for (const method of [route.method].flat()) {
    if (method === 'HEAD') continue;
    app.declaredRoutes.push({ method, url: route.url, operation, access: route.config.access });
  }
}
