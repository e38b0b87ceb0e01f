import { Type } from 'typebox';
import type { Registry } from 'prom-client';
import { AppError } from '../../../errors.js';
import { OPEN } from '../../access.js';
import type { App } from '../../app-type.js';
import type { Deps } from '../../../deps.js';
import { pingDatabase } from '../../../db/ping.js';

/** Health, readiness, metrics and the API description: for operators and tools, no credential. */
export function registerOperations(app: App, deps: Deps, metrics: Registry): void {
  const Status = Type.Object({ status: Type.String() });

  app.get('/healthz', {
    config: { operation: 'operations.health', access: OPEN },
    schema: { summary: 'The process is up', tags: ['operations'], response: { 200: Status } },
    handler: async () => ({ status: 'ok' }),
  });

  app.get('/readyz', {
    config: { operation: 'operations.ready', access: OPEN },
    schema: { summary: 'The database answers', tags: ['operations'], response: { 200: Status } },
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
    schema: { summary: 'Prometheus metrics', tags: ['operations'], produces: ['text/plain'] },
    handler: async (_request, reply) => reply.type(metrics.contentType).send(await metrics.metrics()),
  });

  app.get('/v1/openapi.json', {
    config: { operation: 'operations.openapi', access: OPEN },
    schema: { summary: 'This API described in OpenAPI 3.1', tags: ['operations'] },
    handler: async () => app.swagger(),
  });
}
