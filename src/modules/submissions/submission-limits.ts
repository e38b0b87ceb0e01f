import { addressKey } from '../../client-address.js';
import type { Deps } from '../../deps.js';

/** Submissions are counted in fixed windows of a minute. */
const WINDOW_MS = 60_000;
/** Windows kept at once; past it the oldest are dropped first (they end first). */
const MAX_WINDOWS = 100_000;
/** A collection's per-address rate when its settings name none. */
export const DEFAULT_RATE_PER_MINUTE = 10;

interface Window {
  startedAt: number;
  count: number;
}

/**
 * How many public submissions each address and each collection made this minute, in this
 * process's memory. Checked and counted in one synchronous step, so concurrent requests are held
 * to the limits exactly: no await stands between reading a count and adding to it.
 */
export class SubmissionLimits {
  readonly windows = new Map<string, Window>();
}

declare module '../../services.js' {
  interface Services {
    submissionLimits: SubmissionLimits;
  }
}

/**
 * Counts one submission from `address` to the collection, or answers how many seconds to wait:
 * first the collection's own rate per address (an IPv6 client by its /64, client-address.ts),
 * then PLAINBASE_SUBMISSIONS_PER_MINUTE over every address. A request refused by its address's
 * limit is not counted against the collection's, so one noisy address cannot use up everyone's.
 */
export function takeSubmission(deps: Deps, collectionId: string, address: string, ratePerMinute: number | undefined): { retryAfterSeconds: number } | null {
  const now = deps.clock.now().getTime();
  const { windows } = deps.services.submissionLimits;
  const perAddress = `${collectionId}|${addressKey(address)}`;
  const overAddress = over(windows, perAddress, now, ratePerMinute ?? DEFAULT_RATE_PER_MINUTE);
  if (overAddress) return overAddress;
  const overCollection = over(windows, collectionId, now, deps.config.submissionsPerMinute);
  if (overCollection) return overCollection;
  add(windows, perAddress, now);
  add(windows, collectionId, now);
  return null;
}

function current(windows: Map<string, Window>, key: string, now: number): Window | undefined {
  const window = windows.get(key);
  return window && now - window.startedAt < WINDOW_MS && now >= window.startedAt ? window : undefined;
}

function over(windows: Map<string, Window>, key: string, now: number, limit: number): { retryAfterSeconds: number } | null {
  const window = current(windows, key, now);
  if (!window || window.count < limit) return null;
  return { retryAfterSeconds: Math.max(1, Math.ceil((window.startedAt + WINDOW_MS - now) / 1000)) };
}

function add(windows: Map<string, Window>, key: string, now: number): void {
  const window = current(windows, key, now);
  if (window) {
    window.count += 1;
    return;
  }
  // Re-inserted, so the map stays ordered by window start and the first entries end first.
  windows.delete(key);
  windows.set(key, { startedAt: now, count: 1 });
  for (const [old, oldWindow] of windows) {
    if (now - oldWindow.startedAt < WINDOW_MS && windows.size <= MAX_WINDOWS) break;
    windows.delete(old);
  }
}
