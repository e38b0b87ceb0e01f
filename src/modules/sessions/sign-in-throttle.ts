import { sql } from 'kysely';
import { addressKey } from '../../client-address.js';
import type { Config } from '../../config.js';
import type { Db, Executor } from '../../db/schema.js';
import { rateLimited } from '../../errors.js';
import { normaliseEmail } from '../people/people.js';

/**
 * Failed password checks (sign-in, accepting an invite with an existing account, changing a
 * password), counted in the database so that every process sees the same counts, against two
 * subjects: the account (its email), locked after `signInMaxFailures`, and the caller's address,
 * locked after the much higher `signInMaxFailuresPerAddress`, so that one person's typos never
 * lock out a colleague behind the same address (docs/security.md). Failures count within a window
 * of `signInLockSeconds` from the first one; reaching the limit locks the subject for as long.
 *
 * A check is counted before the password is looked at, by one conditional statement per subject
 * (an upsert that only goes through while the subject is under its limit): a burst of concurrent
 * attempts claims at most the attempts left, on either engine, and each request that finds no
 * attempt left is refused without its password being checked. A right password gives its claim
 * back (passwordCheckSucceeded); a wrong one keeps it, as the failure it was.
 */

type ThrottleConfig = Pick<Config, 'signInMaxFailures' | 'signInMaxFailuresPerAddress' | 'signInLockSeconds'>;

const accountSubject = (email: string) => `email:${normaliseEmail(email)}`;
// An IPv6 client counts by its /64 (client-address.ts), as every per-address limit does.
const addressSubject = (ip: string | null) => `ip:${ip === null ? 'unknown' : addressKey(ip)}`;

/**
 * Claims one password check for the account and the address, or throws 429 naming which is
 * locked and for how long. Both claims commit together or not at all. Answers the account's
 * failures counting this attempt, to pace the answer of a failure.
 */
export async function claimPasswordCheck(db: Db, config: ThrottleConfig, email: string, ip: string | null, now: Date): Promise<number> {
  const account = { subject: accountSubject(email), max: config.signInMaxFailures };
  const address = { subject: addressSubject(ip), max: config.signInMaxFailuresPerAddress };
  // Always the account first, then the address: concurrent claims take row locks in one order.
  return db.transaction().execute(async (trx) => {
    const failures = await claim(trx, account.subject, account.max, config.signInLockSeconds, now);
    if (failures === null) {
      const seconds = await secondsLeft(trx, account.subject, config.signInLockSeconds, now);
      throw rateLimited(seconds, `Too many failed sign-ins for this account: it is locked for ${minutes(seconds)}. Wait, then sign in again; no password is checked until then.`);
    }
    if ((await claim(trx, address.subject, address.max, config.signInLockSeconds, now)) === null) {
      const seconds = await secondsLeft(trx, address.subject, config.signInLockSeconds, now);
      // Thrown inside the transaction, so the account's claim is rolled back with it.
      throw rateLimited(seconds, `Too many failed sign-ins from your network address: try again in ${minutes(seconds)}.`);
    }
    return failures;
  });
}

/** The account's failed sign-ins are forgotten and its lock lifted (a password reset on the server). */
export async function clearAccountFailures(executor: Executor, email: string): Promise<void> {
  await executor.deleteFrom('sign_in_throttle').where('subject', '=', accountSubject(email)).execute();
}

/**
 * A right password: the account's count starts again, and the address gets its claim back. A
 * lock on the address can only have come from this very claim (any claim made while it was in
 * flight and found no attempt left changed nothing), so it goes too.
 */
export async function passwordCheckSucceeded(executor: Executor, email: string, ip: string | null): Promise<void> {
  await executor.deleteFrom('sign_in_throttle').where('subject', '=', accountSubject(email)).execute();
  await executor
    .updateTable('sign_in_throttle')
    .set({ failures: sql<number>`failures - 1`, locked_until: null })
    .where('subject', '=', addressSubject(ip))
    .where('failures', '>', 0)
    .execute();
}

/**
 * One more attempt for `subject` if it has one left: the failures it now has, or null when it
 * is locked (or has used its attempts in this window). A window that is over, or a lock that has
 * run out, starts again at 1. On a conflict both engines update the existing row, which the
 * statement locks, so concurrent claims of one subject take their turns.
 */
async function claim(executor: Executor, subject: string, max: number, windowSeconds: number, now: Date): Promise<number | null> {
  const nowIso = now.toISOString();
  const windowStartedBefore = new Date(now.getTime() - windowSeconds * 1000).toISOString();
  const lockedUntil = new Date(now.getTime() + windowSeconds * 1000).toISOString();
  const existing = {
    failures: sql.ref<number>('sign_in_throttle.failures'),
    windowStartedAt: sql.ref<string>('sign_in_throttle.window_started_at'),
    lockedUntil: sql.ref<string | null>('sign_in_throttle.locked_until'),
  };
  const startsAgain = sql<boolean>`(${existing.windowStartedAt} <= ${windowStartedBefore} or ${existing.lockedUntil} <= ${nowIso})`;
  const next = sql<number>`(case when ${startsAgain} then 1 else ${existing.failures} + 1 end)`;
  const row = await executor
    .insertInto('sign_in_throttle')
    .values({ subject, failures: 1, window_started_at: nowIso, locked_until: max <= 1 ? lockedUntil : null })
    .onConflict((conflict) =>
      conflict
        .column('subject')
        .doUpdateSet({
          failures: next,
          window_started_at: sql<string>`(case when ${startsAgain} then ${nowIso} else ${existing.windowStartedAt} end)`,
          locked_until: sql<string | null>`(case when ${next} >= ${max} then ${lockedUntil} else null end)`,
        })
        .where(sql<boolean>`(${existing.lockedUntil} is null or ${existing.lockedUntil} <= ${nowIso}) and (${existing.failures} < ${max} or ${startsAgain})`),
    )
    .returning('failures')
    .executeTakeFirst();
  return row ? Number(row.failures) : null;
}

/** How long a refused subject waits: until its lock ends, or its window (a limit lowered since). */
async function secondsLeft(executor: Executor, subject: string, windowSeconds: number, now: Date): Promise<number> {
  const row = await executor.selectFrom('sign_in_throttle').select(['locked_until', 'window_started_at']).where('subject', '=', subject).executeTakeFirst();
  const until = row?.locked_until ? Date.parse(row.locked_until) : row ? Date.parse(row.window_started_at) + windowSeconds * 1000 : now.getTime();
  return Math.max(1, Math.ceil((until - now.getTime()) / 1000));
}

function minutes(seconds: number): string {
  if (seconds < 60) return `${seconds} more second${seconds === 1 ? '' : 's'}`;
  const whole = Math.ceil(seconds / 60);
  return `${whole} more minute${whole === 1 ? '' : 's'}`;
}
