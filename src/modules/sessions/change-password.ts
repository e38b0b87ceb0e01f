import type { Deps } from '../../deps.js';
import { invalidRequest } from '../../errors.js';
import type { RequestMeta } from '../audit/audit.js';
import { endOtherSessions } from './sessions.js';
import { auditForPerson } from './sign-in.js';
import { claimPasswordCheck, passwordCheckSucceeded } from './sign-in-throttle.js';
import { hashPassword, verifyPassword } from '../people/password.js';
import { checkNewPassword } from '../../password-rules.js';
import type { Person } from '../people/people.js';

/**
 * A signed-in person changes their password: the current one proves it is them (a session left
 * open on a shared computer must not be enough), and counts against the sign-in lock like any
 * password check. The new one follows the rules of every new password. Every other session of
 * the person ends with it, so whoever else was signed in with the old password is out; the
 * session that made the change goes on. Audited as person.password_changed in each of their
 * workspaces.
 */
export async function changePassword(
  deps: Deps,
  person: Person,
  sessionToken: string,
  input: { currentPassword: string; newPassword: string },
  meta: RequestMeta,
): Promise<void> {
  const now = deps.clock.now();
  // The new password first: a refused one needs no check of the current one, and uses no attempt.
  checkNewPassword(input.newPassword, person.email, 'body.newPassword');
  await claimPasswordCheck(deps.db, deps.config, person.email, meta.ip, now);
  const stored = await deps.db.selectFrom('people').select('password_hash').where('id', '=', person.id).executeTakeFirstOrThrow();
  if (!(await verifyPassword(input.currentPassword, stored.password_hash))) {
    throw invalidRequest('The current password is wrong.', { field: 'body.currentPassword' });
  }
  const passwordHash = await hashPassword(input.newPassword, deps.config.passwordHashCost);
  await deps.db.transaction().execute(async (trx) => {
    await passwordCheckSucceeded(trx, person.email, meta.ip);
    await trx.updateTable('people').set({ password_hash: passwordHash }).where('id', '=', person.id).execute();
    const ended = await endOtherSessions(trx, person.id, sessionToken);
    await auditForPerson(trx, person.id, now, meta, {
      actor: { type: 'person', id: person.id, name: person.name },
      action: 'person.password_changed',
      target: { type: 'person', id: person.id },
      details: { otherSessionsEnded: ended },
    });
  });
}
