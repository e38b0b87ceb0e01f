import rateLimit from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { addressKey } from '../client-address.js';
import type { Config } from '../config.js';
import { rateLimited } from '../errors.js';
import type { App } from './app-type.js';

/**
 * Requests per second, counted per caller: anonymous callers (public reads) by address with
 * PLAINBASE_RATE_LIMIT_PER_IP (lower by default: an anonymous caller costs nothing to be, and its
 * filters may each take a query budget, records/query/query-budget.ts), everyone else by who they
 * are with PLAINBASE_RATE_LIMIT_PER_KEY. `0` switches a limit off. It runs after authentication (preHandler), so it knows the caller.
 *
 * Without `redis`, counts live in this process's memory: N processes allow up to N times the
 * limit. With it (PLAINBASE_REDIS_URL), every process counts in the same place. These limits fail
 * open: a request that cannot be counted because Redis is away is served (skipOnError), since
 * refusing every request would turn a Redis outage into an API outage (docs/scaling.md).
 */
export async function useRateLimits(app: App, config: Config, redis: Redis | null): Promise<void> {
  const limitFor = (request: FastifyRequest) => (request.auth.actor.id === null ? config.rateLimitPerIp : config.rateLimitPerKey);
  await app.register(rateLimit, {
    global: true,
    hook: 'preHandler',
    timeWindow: 1000,
    enableDraftSpec: true,
    ...(redis ? { redis, nameSpace: 'plainbase:requests:', skipOnError: true } : {}),
    max: (request) => limitFor(request) || Number.MAX_SAFE_INTEGER,
    keyGenerator: (request) => (request.auth.actor.id === null ? `ip:${addressKey(request.ip)}` : `${request.auth.actor.type}:${request.auth.actor.id}`),
    // Operations routes and sign-in (which has its own throttle) are not counted; nor are limits set to 0.
    allowList: (request) => request.routeOptions.config.access?.kind === 'open' || limitFor(request) === 0,
    errorResponseBuilder: (_request, context) => rateLimited(context.ttl / 1000),
  });
}
