import { Type } from 'typebox';
import type { Registry } from 'prom-client';
import { AppError } from '../../../errors.js';
import { AnyObject } from '../../schemas.js';
import { OPEN } from '../../access.js';
import type { App } from '../../app-type.js';
import type { Deps } from '../../../deps.js';
import { pingDatabase } from '../../../db/ping.js';
import { constantTimeEqual, sha256Hex } from '../../../secrets.js';

/**
 * Health, readiness, metrics and the API description: for operators and tools, no credential,
 * except /metrics when PLAINBASE_METRICS_TOKEN is set (its figures name routes and load).
 */
export function registerOperations(app: App, deps: Deps, metrics: Registry): void {
  const Status = Type.Object({ status: Type.String() });
  const Healthy = { ...Status, examples: [{ status: 'ok' }] };
  const Ready = { ...Status, examples: [{ status: 'ready' }] };

  app.get('/healthz', {
    config: { operation: 'operations.health', access: OPEN },
    schema: { summary: 'The process is up', tags: ['operations'], response: { 200: Healthy } },
    handler: async () => ({ status: 'ok' }),
  });

  app.get('/readyz', {
    config: { operation: 'operations.ready', access: OPEN },
    schema: { summary: 'The database answers', tags: ['operations'], response: { 200: Ready } },
    handler: async () => {
      try {
        await pingDatabase(deps);
      } catch {
        throw new AppError('UNAVAILABLE', 'The database does not answer.');
      }
      return { status: 'ready' };
    },
  });

  app.get('/metrics', {
    config: { operation: 'operations.metrics', access: OPEN },
    schema: {
      summary: 'Prometheus metrics',
      description:
        'HTTP requests and their latency by method, route and status, and the process\'s own figures (memory, CPU, event loop). ' +
        'When the server sets PLAINBASE_METRICS_TOKEN, send it as Authorization: Bearer <token>; without it, or with another, the answer is 401 UNAUTHENTICATED. See docs/operations.md.',
      tags: ['operations'],
      produces: [metrics.contentType],
      response: {
        200: Type.String({
          description: 'The Prometheus text format.',
          examples: ['# HELP plainbase_http_requests_total HTTP requests answered\n# TYPE plainbase_http_requests_total counter\nplainbase_http_requests_total{method="POST",route="/v1/collections/:col/records",status="201"} 42\n'],
        }),
      },
    },
    handler: async (request, reply) => {
      const token = deps.config.metricsToken;
      // Digests compared, so that neither the bytes nor the length of the token show in the timing.
      if (token !== null && !constantTimeEqual(sha256Hex(bearerToken(request.headers.authorization) ?? ''), sha256Hex(token))) {
        throw new AppError('UNAUTHENTICATED', 'This server\'s metrics need its metrics token: Authorization: Bearer <PLAINBASE_METRICS_TOKEN>.');
      }
      return reply.type(metrics.contentType).send(await metrics.metrics());
    },
  });

  app.get('/v1/openapi.json', {
    config: { operation: 'operations.openapi', access: OPEN },
    schema: {
      summary: 'This API described in OpenAPI 3.1',
      description: 'The document that /docs shows and the SDK\'s types are generated from.',
      tags: ['operations'],
      response: { 200: AnyObject({ description: 'An OpenAPI 3.1 document.', examples: [{ openapi: '3.1.0', info: { title: 'Plainbase API', version: '1' }, paths: {} }] }) },
    },
    handler: async () => app.swagger() as unknown as Record<string, unknown>,
  });
}

function bearerToken(header: string | undefined): string | null {
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  return match ? match[1]! : null;
}
