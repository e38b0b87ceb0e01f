import type { Redis } from 'ioredis';
import { addressKey } from '../client-address.js';
import type { Deps } from '../deps.js';
import { DEFAULT_RATE_PER_MINUTE, takeSubmission } from '../modules/submissions/submission-limits.js';
import { RedisStore, type RedisCounter } from './auth-failures.js';

/**
 * Where public submissions are counted against their limits (a collection's `ratePerMinute` per
 * address, PLAINBASE_SUBMISSIONS_PER_MINUTE per collection): in this process's memory, or with
 * PLAINBASE_REDIS_URL in Redis, shared by every process. Either way a count and its check are
 * one step (a synchronous one in memory, one INCR in Redis), so concurrent requests are held to
 * the limits exactly.
 */
export interface SubmissionLimiter {
  take(deps: Deps, collectionId: string, address: string, ratePerMinute: number | undefined): Promise<{ retryAfterSeconds: number } | null>;
}

declare module 'fastify' {
  interface FastifyInstance {
    submissionLimiter: SubmissionLimiter;
  }
}

export class LocalSubmissionLimiter implements SubmissionLimiter {
  take(deps: Deps, collectionId: string, address: string, ratePerMinute: number | undefined): Promise<{ retryAfterSeconds: number } | null> {
    return Promise.resolve(takeSubmission(deps, collectionId, address, ratePerMinute));
  }
}

const WINDOW_MS = 60_000;

/**
 * Counts in Redis, in fixed windows of a minute. The address first, then the collection: a
 * request refused for its address is not counted against the collection. While Redis cannot be
 * asked, this process's own counts stand in (LocalSubmissionLimiter): the limits then hold per
 * process, as without Redis, rather than not at all or for nobody.
 */
export class RedisSubmissionLimiter implements SubmissionLimiter {
  private readonly counter: RedisCounter;
  private readonly local = new LocalSubmissionLimiter();

  constructor(redis: Redis) {
    this.counter = new RedisStore(false, false, redis, 'plainbase:submissions:');
  }

  async take(deps: Deps, collectionId: string, address: string, ratePerMinute: number | undefined): Promise<{ retryAfterSeconds: number } | null> {
    try {
      const perAddress = await this.count(`${collectionId}|${addressKey(address)}`, ratePerMinute ?? DEFAULT_RATE_PER_MINUTE);
      if (perAddress) return perAddress;
      return await this.count(collectionId, deps.config.submissionsPerMinute);
    } catch {
      return this.local.take(deps, collectionId, address, ratePerMinute);
    }
  }

  private count(key: string, limit: number): Promise<{ retryAfterSeconds: number } | null> {
    return new Promise((resolve, reject) => {
      this.counter.incr(key, (error, result) => {
        if (error || !result) return reject(error ?? new Error('Redis answered no count'));
        resolve(result.current > limit ? { retryAfterSeconds: Math.max(1, Math.ceil(result.ttl / 1000)) } : null);
      }, WINDOW_MS, limit);
    });
  }
}
