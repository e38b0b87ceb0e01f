import type { FastifyReply, FastifyRequest } from 'fastify';
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
 * request that presented no credential at all) per address, in this process's memory. While an
 * address is past `limit` failures within a minute, every refusal it gets is a 429 instead of a
 * 401, until its minute is over: a program stuck on a revoked key is told to back off, and a
 * guesser learns nothing about why a credential failed. A valid credential from that address is
 * still served, so one misconfigured program or person does not lock out everyone behind the
 * same address (docs/security.md). The rate limiter proper (rate-limit.ts) cannot do this: it
 * runs after authentication, which a bad credential never passes.
 */
export class AuthFailureLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly limit: number) {}

  /** The 429 that refusals from `address` get while it is over its budget, or null. */
  blocked(address: string, now: number): AppError | null {
    if (this.limit === 0) return null;
    const window = this.current(address, now);
    if (!window || window.failures < this.limit) return null;
    const seconds = Math.max(1, Math.ceil((window.startedAt + WINDOW_MS - now) / 1000));
    return new AppError('RATE_LIMITED', 'Too many failed authentications from this address; try again later.', { retryAfterSeconds: seconds }, {
      'retry-after': String(seconds),
      // The same headers as the request rate limits (rate-limit.ts), so clients back off alike.
      'ratelimit-limit': String(this.limit),
      'ratelimit-remaining': '0',
      'ratelimit-reset': String(seconds),
    });
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

/**
 * The app's authentication step (auth.ts) as an onRequest hook, with the failure limiter: each
 * 401 it answers to a request that presented a credential (a key, a session cookie) is counted
 * against the address (request.ip: the client's address as PLAINBASE_TRUST_PROXY resolves it),
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
        const now = deps.clock.now().getTime();
        // Judged before this failure is counted: the failure that uses up the budget still answers 401.
        const blocked = limiter.blocked(request.ip, now);
        if (presentsCredential(request)) limiter.recordFailure(request.ip, now);
        if (blocked) return done(blocked);
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
