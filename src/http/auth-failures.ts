import { createRequire } from 'node:module';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { addressKey } from '../client-address.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { authenticate, presentsCredential } from './auth.js';

/** Failures are counted per address in fixed windows of this length. */
const WINDOW_MS = 60_000;
/** Addresses tracked at once; past it the oldest windows are dropped first (they end first). */
const MAX_ADDRESSES = 100_000;

interface Window {
  startedAt: number;
  failures: number;
}

/**
 * Counts refused authentications (401: a bad, revoked or expired key, an ended session; not a
 * request that presented no credential at all) per address. While an address is past `limit`
 * failures within a minute, every refusal it gets is a 429 instead of a 401, until its minute is
 * over: a program stuck on a revoked key is told to back off, and a guesser learns nothing about
 * why a credential failed. A valid credential from that address is still served, so one
 * misconfigured program or person does not lock out everyone behind the same address
 * (docs/security.md). The rate limiter proper (rate-limit.ts) cannot do this: it runs after
 * authentication, which a bad credential never passes.
 */
export interface AuthFailureLimiter {
  /**
   * Judges one refusal from `address`: the 429 to answer instead of the 401, or null. Judged
   * before this failure is counted, so the failure that uses up the budget still answers 401.
   * `counts` is false for a request that presented no credential: it guesses nothing.
   */
  judge(address: string, now: number, counts: boolean): Promise<AppError | null>;
}

function tooManyFailures(limit: number, seconds: number): AppError {
  return new AppError('RATE_LIMITED', 'Too many failed authentications from this address; try again later.', { retryAfterSeconds: seconds }, {
    'retry-after': String(seconds),
    // The same headers as the request rate limits (rate-limit.ts), so clients back off alike.
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': '0',
    'ratelimit-reset': String(seconds),
  });
}

/** Counts in this process's memory: N processes allow up to N times the limit. */
export class LocalAuthFailureLimiter implements AuthFailureLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly limit: number) {}

  async judge(address: string, now: number, counts: boolean): Promise<AppError | null> {
    const blocked = this.blocked(address, now);
    if (counts) this.recordFailure(address, now);
    return blocked;
  }

  /** The 429 that refusals from `address` get while it is over its budget, or null. */
  blocked(address: string, now: number): AppError | null {
    if (this.limit === 0) return null;
    const window = this.current(address, now);
    if (!window || window.failures < this.limit) return null;
    return tooManyFailures(this.limit, Math.max(1, Math.ceil((window.startedAt + WINDOW_MS - now) / 1000)));
  }

  recordFailure(address: string, now: number): void {
    if (this.limit === 0) return;
    const window = this.current(address, now);
    if (window) {
      window.failures += 1;
      return;
    }
    // Re-inserted, so the map stays ordered by window start and the first entries end first.
    this.windows.delete(address);
    this.windows.set(address, { startedAt: now, failures: 1 });
    this.forgetEnded(now);
  }

  private current(address: string, now: number): Window | undefined {
    const window = this.windows.get(address);
    return window && now - window.startedAt < WINDOW_MS ? window : undefined;
  }

  /** Drops ended windows from the front, and the oldest beyond MAX_ADDRESSES, so memory stays bounded. */
  private forgetEnded(now: number): void {
    for (const [address, window] of this.windows) {
      if (now - window.startedAt < WINDOW_MS && this.windows.size <= MAX_ADDRESSES) break;
      this.windows.delete(address);
    }
  }
}

/** The store @fastify/rate-limit counts in Redis: one atomic script per count (INCR, PEXPIRE on the first). */
export interface RedisCounter {
  incr(key: string, done: (error: Error | null, result: { current: number; ttl: number } | null) => void, windowMs: number, max: number): void;
  read(key: string, done: (error: Error | null, result: { current: number; ttl: number } | null) => void): void;
}
export const RedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore.js') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  redis: Redis,
  prefix: string,
) => RedisCounter;

/**
 * Counts in Redis, shared by every process (PLAINBASE_REDIS_URL), in the same fixed windows.
 * Fails closed: while Redis cannot be asked, a refused credential is answered 429 (retry in a
 * second) rather than let guessing go uncounted. That costs nobody anything: a valid credential
 * never reaches this, and a refused one was going to be refused anyway. A request with no
 * credential is not counted, and keeps its 401.
 */
export class RedisAuthFailureLimiter implements AuthFailureLimiter {
  private readonly counter: RedisCounter;

  constructor(private readonly limit: number, redis: Redis) {
    this.counter = new RedisStore(false, false, redis, 'plainbase:auth-failures:');
  }

  judge(address: string, _now: number, counts: boolean): Promise<AppError | null> {
    if (this.limit === 0) return Promise.resolve(null);
    return new Promise((resolve) => {
      const judged = (error: Error | null, result: { current: number; ttl: number } | null) => {
        if (error || !result) return resolve(counts ? tooManyFailures(this.limit, 1) : null);
        // An increment returns the count with this failure in it; the budget is judged without it.
        const before = counts ? result.current - 1 : result.current;
        resolve(before >= this.limit ? tooManyFailures(this.limit, Math.max(1, Math.ceil(result.ttl / 1000))) : null);
      };
      if (counts) this.counter.incr(address, judged, WINDOW_MS, this.limit);
      else this.counter.read(address, judged);
    });
  }
}

/**
 * The app's authentication step (auth.ts) as an onRequest hook, with the failure limiter: each
 * 401 it answers to a request that presented a credential (a key, a session cookie) is counted
 * against the address (request.ip: the client's address as PLAINBASE_TRUST_PROXY resolves it; an
 * IPv6 client by its /64, client-address.ts),
 * and answered 429 while the address is over its budget. A request with no credential guesses
 * nothing, so its 401 is not counted: a signed-out dashboard polling its session behind a shared
 * address must not use up that address's budget. Open routes are not counted either.
 * A callback hook, not an async one: authentication is often synchronous (auth.ts), and then
 * the request goes on without a promise and a turn of the microtask queue.
 */
export function authenticateCountingFailures(deps: Deps, limiter: AuthFailureLimiter) {
  return (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
    const access = request.routeOptions.config.access;
    const counted = access !== undefined && access.kind !== 'open';
    const refuse = (error: unknown) => {
      if (counted && error instanceof AppError && error.status === 401) {
        limiter.judge(addressKey(request.ip), deps.clock.now().getTime(), presentsCredential(deps.config, request)).then((blocked) => done(blocked ?? (error as Error)));
        return;
      }
      done(error as Error);
    };
    let pending: Promise<void> | undefined;
    try {
      pending = authenticate(deps, request, access);
    } catch (error) {
      refuse(error);
      return;
    }
    if (pending === undefined) done();
    else pending.then(() => done(), refuse);
  };
}
