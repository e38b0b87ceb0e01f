import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { RouteOptions } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../config.js';
import type { Access } from './access.js';
import type { App } from './app-type.js';
import { WORKSPACE_HEADER } from './auth.js';
import { ERROR_EXAMPLES, RETRY_AFTER, SERVER_ERROR_EXAMPLES } from './schemas.js';
import { sessionCookieName } from './session-cookie.js';

/**
 * The OpenAPI document (/v1/openapi.json) and the console that reads it (/docs). The document is
 * made by @fastify/swagger from the route schemas; what every operation shares (credentials, the
 * error answers, Retry-After) is added here, so each route file holds only its own contract.
 */

const TAGS: { name: string; description: string }[] = [
  { name: 'auth', description: 'Setting up, signing in and out, the session, the password. For people; programs use API keys.' },
  { name: 'workspaces', description: 'The workspaces of the signed-in person.' },
  { name: 'members', description: 'People in the workspace, their roles and invites.' },
  { name: 'audit', description: 'Who changed what in the workspace.' },
  { name: 'keys', description: 'API keys, and GET /v1/me: what the calling key may do.' },
  { name: 'service accounts', description: 'Machine users whose keys follow the account\'s role, not a person\'s.' },
  { name: 'collections', description: 'Named sets of records; public collections can be read without a credential.' },
  { name: 'records', description: 'JSON records, with ETags for safe concurrent changes; import and export.' },
  { name: 'indexes', description: 'Indexes on record fields, for faster filters and sorts.' },
  { name: 'schemas', description: 'Versioned JSON Schemas that records are checked against.' },
  { name: 'files', description: 'File uploads, downloads (Range, ETag) and attachment to records.' },
  { name: 'webhooks', description: 'Signed deliveries of events to your receivers, with retries and a delivery log.' },
  { name: 'events', description: 'The event feed and its live stream (server-sent events).' },
  { name: 'backups', description: 'Archives of the whole service, taken on a schedule or on request; for the first owner only.' },
  { name: 'operations', description: 'Health, readiness, metrics and this document; no credential.' },
];

export async function registerOpenApi(app: App, config: Config): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Plainbase API',
        version: '1',
        description:
          'Collections of JSON records with versioned schemas and files, scoped API keys and signed webhooks. ' +
          'Programs send an API key as `Authorization: Bearer pb_live_…`; the dashboard uses a session cookie and names ' +
          `the workspace in the \`${WORKSPACE_HEADER}\` header. Every error answers the Error shape with a stable \`code\`.`,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: config.publicUrl }],
      tags: TAGS,
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: pb_live_… or pb_test_…, sent as `Authorization: Bearer <key>`.' },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: sessionCookieName(config),
            description: `The session cookie that signing in sets (the dashboard's). Calls into a workspace also name it in the ${WORKSPACE_HEADER} header.`,
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transformObject: (document) => addSharedAnswers((document as { openapiObject: unknown }).openapiObject as OpenApiDocument) as never,
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // Plainbase's own name and mark in the top bar (linking back to the dashboard) and the tab, not the framework's.
    logo: { type: 'image/svg+xml', content: Buffer.from(PLAINBASE_LOGO), href: '/', target: '_self' },
    theme: {
      title: 'Plainbase API reference',
      favicon: [{ filename: 'favicon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: Buffer.from(PLAINBASE_MARK) }],
      css: [{ filename: 'plainbase.css', content: '.swagger-ui .topbar { background: #1d2329; } .swagger-ui .topbar a { max-width: none; }' }],
    },
    // The key typed into "Authorize" survives a reload of the page (it stays in this browser's storage).
    uiConfig: { persistAuthorization: true, displayOperationId: true },
  });
}

/** The dashboard's icon (web/public/favicon.svg), and with the words beside it for the API reference's top bar. */
const PLAINBASE_MARK =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f5fbf"/><g fill="#fff"><rect x="7" y="8" width="18" height="4" rx="1.5"/><rect x="7" y="14" width="18" height="4" rx="1.5"/><rect x="7" y="20" width="11" height="4" rx="1.5"/></g></svg>';
const PLAINBASE_LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 360 40" width="360" height="40"><title>Plainbase API reference</title>' +
  '<g transform="translate(0 4)"><rect width="32" height="32" rx="7" fill="#1f5fbf"/><g fill="#fff"><rect x="7" y="8" width="18" height="4" rx="1.5"/><rect x="7" y="14" width="18" height="4" rx="1.5"/><rect x="7" y="20" width="11" height="4" rx="1.5"/></g></g>' +
  '<text x="44" y="28" font-family="system-ui, sans-serif" font-size="22" font-weight="700" fill="#fff">Plainbase <tspan font-weight="400">API reference</tspan></text></svg>';

const RESPONSE_WORDS: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No content', 206: 'Part of the content (Range)' };

/**
 * Completes a route's schema for the document: an operationId, its credentials, a description
 * for every answer and the error answers. Runs as each route is added.
 */
export function documentRoute(schema: NonNullable<RouteOptions['schema']>, operation: string, access: Access): NonNullable<RouteOptions['schema']> {
  const documented: Record<string, unknown> = { ...schema, operationId: operation, ...documentedCredentials(access, schema.headers as HeaderSchema | undefined) };
  if (schema.response) {
    documented.response = { ...describeResponses(schema.response as Record<string, object>), '4xx': { $ref: 'Error#' }, '5xx': { $ref: 'Error#' } };
  }
  return documented;
}

/** Every answer of the document says what it is, instead of "Default Response". */
function describeResponses(responses: Record<string, object>): Record<string, object> {
  const described: Record<string, object> = {};
  for (const [status, schema] of Object.entries(responses)) {
    described[status] = 'description' in schema || '$ref' in schema ? schema : { ...schema, description: RESPONSE_WORDS[status] ?? `Status ${status}` };
  }
  return described;
}

type HeaderSchema = { type: 'object'; properties: Record<string, unknown>; required?: string[] };

/**
 * The credentials each operation takes, for the document (and so for "Try it out" on /docs): an
 * API key, a session cookie, or none; and, for a session in a workspace, the x-baas-workspace
 * header as a parameter, beside the route's own headers (If-Match, Idempotency-Key, Range).
 */
function documentedCredentials(access: Access, ownHeaders: HeaderSchema | undefined): { security: Record<string, string[]>[]; headers?: object } {
  switch (access.kind) {
    case 'open':
      return { security: [] };
    case 'person':
      return { security: [{ session: [] }] };
    default: {
      const anonymous = access.kind === 'workspace' && (access.publicRead || access.publicSubmit) ? [{}] : [];
      return {
        security: [{ apiKey: [] }, { session: [] }, ...anonymous],
        headers: Type.Object({
          ...(ownHeaders?.properties as object),
          [WORKSPACE_HEADER]: Type.Optional(Type.String({
            description: 'The workspace, for a signed-in person (session) or an anonymous read of a public collection by name: ws_…. An API key carries its own workspace.',
          })),
        }),
      };
    }
  }
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { security?: object[]; responses?: Record<string, { description: string; headers?: object; content?: Record<string, Record<string, unknown>> }> }>>;
  components: { headers?: Record<string, object> };
}

/**
 * What every operation can answer beyond its own schema: 429 with Retry-After when a rate limit
 * or the failed-credential limit holds the caller back, and examples of the error shape.
 */
function addSharedAnswers(document: OpenApiDocument): OpenApiDocument {
  document.components.headers = { ...document.components.headers, RetryAfter: RETRY_AFTER };
  for (const methods of Object.values(document.paths)) {
    for (const operation of Object.values(methods)) {
      const responses = operation.responses;
      if (!responses?.['4XX']) continue;
      // Limits count callers that present a credential; a route without one may declare its own 429 (sign-in's throttle).
      const limited = Boolean(operation.security?.length) || '429' in responses;
      const clientError = responses['4XX'];
      clientError.description = 'The request was refused; `error.code` says why (the codes and their statuses are listed in the Error schema).';
      setExamples(clientError, ERROR_EXAMPLES);
      const own = Object.fromEntries(Object.entries(responses).filter(([status]) => !status.endsWith('XX') && status !== '429'));
      // Listed in the order of statuses: the operation's own answers, 429, then the ranges.
      operation.responses = {
        ...own,
        ...(limited ? { '429': {
          description: 'Too many requests (RATE_LIMITED), or too many failed credentials from this address: wait as many seconds as Retry-After says.',
          headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } },
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: ERROR_EXAMPLES.RATE_LIMITED!.value } },
        } } : {}),
        '4XX': clientError,
        ...(responses['5XX'] ? { '5XX': responses['5XX'] } : {}),
      };
      const serverError = responses['5XX'];
      if (serverError) {
        serverError.description = 'Something failed on the server (INTERNAL) or the database cannot be reached (UNAVAILABLE); the request id helps find it in the logs.';
        setExamples(serverError, SERVER_ERROR_EXAMPLES);
      }
    }
  }
  return document;
}

function setExamples(response: { content?: Record<string, Record<string, unknown>> }, examples: Record<string, { summary: string; value: unknown }>): void {
  const media = response.content?.['application/json'];
  if (media) media.examples = examples;
}
