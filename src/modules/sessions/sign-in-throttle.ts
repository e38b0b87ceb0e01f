import type { Config } from '../../config.js';
import type { Executor } from '../../db/schema.js';
import { normaliseEmail } from '../people/people.js';

/** The subjects one attempt counts against: the account's email and the caller's address. */
export function throttleSubjects(email: string, ip: string | null): [string, string] {
  return [`email:${normaliseEmail(email)}`, `ip:${ip ?? 'unknown'}`];
}

/**
 * Counts failed sign-ins per subject (`ip:…` and `email:…`) in the database, so every process
 * sees the same counts. After `signInMaxFailures` failures within `signInLockSeconds` the subject
 * is locked for `signInLockSeconds`.
 */
export async function secondsLocked(executor: Executor, subjects: string[], now: Date): Promise<number> {
  const rows = await executor
    .selectFrom('sign_in_throttle')
    .select('locked_until')
    .where('subject', 'in', subjects)
    .where('locked_until', '>', now.toISOString())
    .execute();
  const longest = Math.max(0, ...rows.map((row) => Date.parse(row.locked_until!) - now.getTime()));
  return Math.ceil(longest / 1000);
}

/** Records one failure and returns how many the subject has in its current window. */
export async function recordFailure(
  executor: Executor,
  subject: string,
  now: Date,
  config: Pick<Config, 'signInMaxFailures' | 'signInLockSeconds'>,
): Promise<number> {
  const windowMs = config.signInLockSeconds * 1000;
  const existing = await executor.selectFrom('sign_in_throttle').selectAll().where('subject', '=', subject).executeTakeFirst();
  const fresh = !existing || Date.parse(existing.window_started_at) + windowMs <= now.getTime();
  const failures = fresh ? 1 : existing.failures + 1;
  const lockedUntil = failures >= config.signInMaxFailures ? new Date(now.getTime() + windowMs).toISOString() : null;
  const row = {
    failures,
    window_started_at: fresh ? now.toISOString() : existing.window_started_at,
    locked_until: lockedUntil,
  };
  await executor
    .insertInto('sign_in_throttle')
    .values({ subject, ...row })
    .onConflict((oc) => oc.column('subject').doUpdateSet(row))
    .execute();
  return failures;
}

export async function clearFailures(executor: Executor, subject: string): Promise<void> {
  await executor.deleteFrom('sign_in_throttle').where('subject', '=', subject).execute();
}
