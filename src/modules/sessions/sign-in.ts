import { setTimeout as sleep } from 'node:timers/promises';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { recordAudit, type AuditInput, type RequestMeta } from '../audit/audit.js';
import { findPersonByEmail, normaliseEmail, type Person } from '../people/people.js';
import { decoyPasswordHash, verifyPassword } from '../people/password.js';
import { createSession, type NewSession } from './sessions.js';
import { claimPasswordCheck, passwordCheckSucceeded } from './sign-in-throttle.js';

/** Extra wait before answering the n-th failure in a row: grows linearly, capped at 2 s. */
export function failureDelayMs(failures: number, stepMs: number): number {
  return Math.min(2000, Math.max(0, failures - 1) * stepMs);
}

/**
 * Checks an email and password and opens a session. A wrong email and a wrong password give the
 * same answer after the same work (the decoy hash), so the answer does not tell which was wrong.
 * The check is claimed from the lock first (sign-in-throttle.ts): a locked account or address is
 * refused before any password is looked at.
 */
export async function signIn(
  deps: Deps,
  input: { email: string; password: string },
  meta: RequestMeta,
): Promise<{ person: Person; session: NewSession }> {
  const now = deps.clock.now();
  const email = normaliseEmail(input.email);
  const failures = await claimPasswordCheck(deps.db, deps.config, email, meta.ip, now);

  const stored = await findPersonByEmail(deps.db, email);
  const matches = await verifyPassword(input.password, stored?.password_hash ?? (await decoyPasswordHash(deps.config.passwordHashCost)));

  if (!stored || !matches) {
    await deps.db.transaction().execute((trx) =>
      auditForPerson(trx, stored?.id ?? null, now, meta, {
        actor: { type: 'person', id: stored?.id ?? null, name: stored?.name ?? null },
        action: 'auth.sign_in_failed',
        details: { email },
      }),
    );
    await sleep(failureDelayMs(failures, deps.config.signInSlowdownMs));
    throw new AppError('UNAUTHENTICATED', 'The email or the password is wrong.');
  }

  const person: Person = { id: stored.id, email: stored.email, name: stored.name };
  const session = await deps.db.transaction().execute(async (trx) => {
    await passwordCheckSucceeded(trx, email, meta.ip);
    await auditForPerson(trx, person.id, now, meta, {
      actor: { type: 'person', id: person.id, name: person.name },
      action: 'auth.signed_in',
      target: { type: 'person', id: person.id },
    });
    return createSession(trx, deps, person.id, meta);
  });
  return { person, session };
}

/**
 * Sign-ins belong to no workspace; each workspace the person is in gets the entry, so its
 * admins see it and tenants stay apart. Unknown emails are kept outside any workspace.
 */
export async function auditForPerson(
  executor: Executor,
  personId: string | null,
  at: Date,
  meta: RequestMeta,
  input: Omit<AuditInput, 'workspaceId'>,
): Promise<void> {
  const workspaces = personId
    ? await executor.selectFrom('memberships').select('workspace_id').where('person_id', '=', personId).execute()
    : [];
  if (workspaces.length === 0) return recordAudit(executor, at, meta, { ...input, workspaceId: null });
  for (const { workspace_id } of workspaces) await recordAudit(executor, at, meta, { ...input, workspaceId: workspace_id });
}
