import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';

/**
 * How long a counter may take before the request goes on without it. A Redis that hangs (paused,
 * partitioned) must cost a request at most this, never the request itself.
 */
const COMMAND_TIMEOUT_MS = 250;

/**
 * Opens the connection that the request limits and the failed-authentication limit count in,
 * so that every process behind one load balancer shares their counts (docs/scaling.md).
 *
 * Built so that Redis going away never takes the API down: commands are not queued while the
 * connection is down (they fail at once and each limit decides what a failure means:
 * rate-limit.ts, auth-failures.ts), a hung command gives up after COMMAND_TIMEOUT_MS, and the
 * client reconnects by itself in the background. The URL is never logged: it may hold a password.
 * ioredis is loaded here, on first use, so a service without Redis never pays for it.
 */
export async function connectRedis(url: string, log: FastifyBaseLogger): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  // Said once per outage rather than once per failed reconnect attempt.
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    log.warn({ err: { message: error.message } }, 'Redis is unreachable: request limits are not counted and failed authentications are answered 429 until it is back');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    log.info('Redis is reachable again: shared limits are counted again');
  });
  // Starts counting in Redis once it answers; if it does not (yet), starts anyway and reconnects.
  await new Promise<void>((resolve) => {
    const settled = () => {
      redis.off('ready', settled);
      redis.off('error', settled);
      resolve();
    };
    redis.on('ready', settled);
    redis.on('error', settled);
  });
  return redis;
}
