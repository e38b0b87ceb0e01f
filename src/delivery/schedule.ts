/**
 * The retry schedule (docs/design.md §7): the gap after attempt n (1-based) that failed. After the
 * 8th failure a delivery is dead; a receiver may be down about 2 h 19 min before that. No jitter:
 * the schedule is part of the contract.
 */
export const RETRY_GAPS_SECONDS = [15, 30, 60, 120, 900, 3600, 3600] as const;
export const MAX_ATTEMPTS = RETRY_GAPS_SECONDS.length + 1;
export const DEAD_IN_A_ROW_LIMIT = 25;
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** When to try again after `attemptCount` failed attempts, or null when the delivery is dead. */
export function nextAttemptAt(failedAt: Date, attemptCount: number): Date | null {
  if (attemptCount >= MAX_ATTEMPTS) return null;
  return new Date(failedAt.getTime() + RETRY_GAPS_SECONDS[attemptCount - 1]! * 1000);
}
