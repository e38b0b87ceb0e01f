import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import type { RequestMeta } from '../audit/audit.js';
import type { Person } from '../people/people.js';
import { deleteSessionOf, deleteSessionsOf } from './sessions.js';
import { auditForPerson } from './sign-in.js';

/**
 * Ends one of the signed-in person's sessions (a lost laptop, a browser left signed in), audited
 * in each of their workspaces as sign-ins are. Answers whether it was the calling session, whose
 * cookie then goes too. An unknown id, or another person's session, is 404 alike.
 */
export async function endSession(deps: Deps, person: Person, sessionId: string, currentToken: string, meta: RequestMeta): Promise<{ current: boolean }> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const { ended, current } = await deleteSessionOf(trx, person.id, sessionId, currentToken);
    if (!ended) throw new AppError('NOT_FOUND', 'You have no such session.');
    await auditForPerson(trx, person.id, now, meta, {
      actor: { type: 'person', id: person.id, name: person.name },
      action: 'auth.session_ended',
      target: { type: 'person', id: person.id },
      details: { sessionId, current },
    });
    return { current };
  });
}

/**
 * Ends every session of the signed-in person, the calling one included unless `keepCurrent`
 * (docs/security.md): answers how many ended.
 */
export async function signOutEverywhere(deps: Deps, person: Person, currentToken: string, keepCurrent: boolean, meta: RequestMeta): Promise<number> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const ended = await deleteSessionsOf(trx, person.id, keepCurrent ? currentToken : null);
    await auditForPerson(trx, person.id, now, meta, {
      actor: { type: 'person', id: person.id, name: person.name },
      action: 'auth.signed_out_everywhere',
      target: { type: 'person', id: person.id },
      details: { sessionsEnded: ended, keptCurrent: keepCurrent },
    });
    return ended;
  });
}
