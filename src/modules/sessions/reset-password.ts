import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { checkNewPassword } from '../../password-rules.js';
import type { RequestMeta } from '../audit/audit.js';
import { hashPassword } from '../people/password.js';
import { findPersonByEmail, normaliseEmail } from '../people/people.js';
import { deleteSessionsOf } from './sessions.js';
import { auditForPerson } from './sign-in.js';
import { clearAccountFailures } from './sign-in-throttle.js';

const CLI_META: RequestMeta = { ip: null, userAgent: 'plainbase reset-password', requestId: null };

/**
 * A forgotten password, set anew by whoever runs commands on the server (`plainbase
 * reset-password`): there is no email sending, and access to the server's database is already
 * more than any password gives. The new password follows the rules of every new password; every
 * session of the person ends (whoever signed in with the old one is out), the account's failed
 * sign-ins are forgotten (a locked-out owner can sign in at once), and each workspace of the
 * person gets a person.password_reset entry by the system. Answers the person and how many
 * sessions ended.
 */
export async function resetPassword(deps: Deps, email: string, newPassword: string): Promise<{ personId: string; email: string; sessionsEnded: number }> {
  const person = await findPersonByEmail(deps.db, normaliseEmail(email));
  if (!person) throw new AppError('NOT_FOUND', `no person has the email ${email}`);
  checkNewPassword(newPassword, person.email, 'password');
  const passwordHash = await hashPassword(newPassword, deps.config.passwordHashCost);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    await trx.updateTable('people').set({ password_hash: passwordHash }).where('id', '=', person.id).execute();
    const sessionsEnded = await deleteSessionsOf(trx, person.id, null);
    await clearAccountFailures(trx, person.email);
    await auditForPerson(trx, person.id, now, CLI_META, {
      actor: { type: 'system', id: null, name: 'plainbase reset-password' },
      action: 'person.password_reset',
      target: { type: 'person', id: person.id },
      details: { sessionsEnded },
    });
    return { personId: person.id, email: person.email, sessionsEnded };
  });
}
