import type { Role } from '../../abilities.js';
import { sql, type SqlBool } from 'kysely';
import type { ExpiringRows } from '../../db/expiring-rows.js';
import { rowLimit } from '../../db/row-limit.js';
import type { Deps } from '../../deps.js';
import { AppError, conflict, invalidRequest, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { randomToken, sha256Hex } from '../../secrets.js';
import { recordAudit, type Actor, type RequestMeta } from '../audit/audit.js';
import { findPersonByEmail, insertPerson, normaliseEmail, type Person } from '../people/people.js';
import { verifyPassword } from '../people/password.js';
import { createSession, type NewSession } from '../sessions/sessions.js';
import { claimPasswordCheck, passwordCheckSucceeded } from '../sessions/sign-in-throttle.js';

export const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;

/** Invites past their 7 days, accepted or not (an accepted one has become a membership), for housekeeping to delete. */
export const EXPIRED_INVITES: ExpiringRows = {
  name: 'invites',
  table: 'invites',
  key: ['id'],
  expired: (now) => sql<SqlBool>`expires_at <= ${now.toISOString()}`,
};

export interface InviteView {
  id: string;
  email: string;
  role: Exclude<Role, 'owner'>;
  expiresAt: string;
  createdAt: string;
  invitedBy: string;
  /** Only in the response that creates the invite: the token is stored hashed. */
  token?: string;
  url?: string;
}

/** No email is sent: the link goes back to the inviter, who passes it on. */
export async function createInvite(
  deps: Deps,
  workspaceId: string,
  actor: Actor,
  input: { email: string; role: Exclude<Role, 'owner'> },
  meta: RequestMeta,
): Promise<InviteView> {
  const now = deps.clock.now();
  const email = normaliseEmail(input.email);
  const token = randomToken();
  const invite = {
    id: newId('inv', now.getTime()),
    workspace_id: workspaceId,
    email,
    role: input.role,
    token_hash: sha256Hex(token),
    invited_by: actor.id ?? 'system',
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + INVITE_TTL_MS).toISOString(),
    accepted_at: null,
    accepted_by: null,
  };
  await deps.db.transaction().execute(async (trx) => {
    const member = await trx
      .selectFrom('memberships')
      .innerJoin('people', 'people.id', 'memberships.person_id')
      .select('people.id')
      .where('memberships.workspace_id', '=', workspaceId)
      .where('people.email', '=', email)
      .executeTakeFirst();
    if (member) throw conflict('This person is already a member of the workspace.');
    await trx.insertInto('invites').values(invite).execute();
    await recordAudit(trx, now, meta, {
      workspaceId,
      actor,
      action: 'invite.created',
      target: { type: 'invite', id: invite.id },
      details: { email, role: input.role },
    });
  });
  return {
    ...toView(invite),
    token,
    url: `${deps.config.publicUrl}/invite/${encodeURIComponent(token)}`,
  };
}

/** Up to `limit` pending invites, newest first, older than the id `before`. */
export async function listPendingInvites(deps: Deps, workspaceId: string, page: { limit: number; before?: string }): Promise<InviteView[]> {
  let query = deps.db
    .selectFrom('invites')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('accepted_at', 'is', null)
    .where('expires_at', '>', deps.clock.now().toISOString());
  if (page.before !== undefined) query = query.where('id', '<', page.before);
  const rows = await query.orderBy('id', 'desc').limit(rowLimit(page.limit)).execute();
  return rows.map(toView);
}

export async function revokeInvite(deps: Deps, workspaceId: string, actor: Actor, inviteId: string, meta: RequestMeta): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const deleted = await trx
      .deleteFrom('invites')
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', inviteId)
      .where('accepted_at', 'is', null)
      .executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) throw notFound('invite');
    await recordAudit(trx, deps.clock.now(), meta, { workspaceId, actor, action: 'invite.revoked', target: { type: 'invite', id: inviteId } });
  });
}

/** What the person holding an invite link may see before accepting it: nothing more than the link grants. */
export interface InvitePreview {
  workspaceName: string;
  /** The inviter's name, or null when the person who invited has since left the service. */
  inviterName: string | null;
  email: string;
  role: Exclude<Role, 'owner'>;
  expiresAt: string;
}

const INVALID_LINK = 'This invite link is not valid: it was used, revoked or has expired.';

/**
 * An invite read by its token, for the page that accepts it. Looked up by the token's hash, as
 * accepting does, so the stored hashes answer no timing question about a guessed token; a used,
 * revoked, expired or unknown token is the same NOT_FOUND as accepting gives.
 */
export async function previewInvite(deps: Deps, token: string): Promise<InvitePreview> {
  const row = await deps.db
    .selectFrom('invites')
    .innerJoin('workspaces', 'workspaces.id', 'invites.workspace_id')
    .leftJoin('people', 'people.id', 'invites.invited_by')
    .select(['invites.email', 'invites.role', 'invites.expires_at', 'invites.accepted_at', 'workspaces.name as workspace_name', 'people.name as inviter_name'])
    .where('invites.token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  if (!row || row.accepted_at !== null || row.expires_at <= deps.clock.now().toISOString()) throw new AppError('NOT_FOUND', INVALID_LINK);
  return {
    workspaceName: row.workspace_name,
    inviterName: row.inviter_name ?? null,
    email: row.email,
    role: row.role as Exclude<Role, 'owner'>,
    expiresAt: row.expires_at,
  };
}

/**
 * Accepts an invite by its token. Someone new gives a name and a password; someone who already
 * has an account proves it with their password. Either way they are signed in.
 */
export async function acceptInvite(
  deps: Deps,
  token: string,
  input: { name?: string; password: string },
  meta: RequestMeta,
): Promise<{ person: Person; session: NewSession; workspaceId: string }> {
  const now = deps.clock.now();
  const invite = await deps.db.selectFrom('invites').selectAll().where('token_hash', '=', sha256Hex(token)).executeTakeFirst();
  if (!invite || invite.accepted_at !== null || invite.expires_at <= now.toISOString()) {
    throw new AppError('NOT_FOUND', INVALID_LINK);
  }

  const existing = await findPersonByEmail(deps.db, invite.email);
  // Whoever holds the link (the inviter too) must not get unlimited guesses at an existing
  // account's password: this check counts against the same lock as signing in.
  if (existing) {
    await claimPasswordCheck(deps.db, deps.config, invite.email, meta.ip, now);
    if (!(await verifyPassword(input.password, existing.password_hash))) {
      throw new AppError('UNAUTHENTICATED', 'You already have an account with this email: give its password to accept.');
    }
    await passwordCheckSucceeded(deps.db, invite.email, meta.ip);
  }
  if (!existing && !input.name?.trim()) throw invalidRequest('A name is needed to create your account.', { field: 'body.name' });

  return deps.db.transaction().execute(async (trx) => {
    // Marking the invite first, conditionally, makes a second acceptance of the same token lose.
    const claimed = await trx
      .updateTable('invites')
      .set({ accepted_at: now.toISOString() })
      .where('id', '=', invite.id)
      .where('accepted_at', 'is', null)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) === 0) throw new AppError('NOT_FOUND', 'This invite link was already used.');

    const person = existing
      ? { id: existing.id, email: existing.email, name: existing.name }
      : await insertPerson(trx, { email: invite.email, name: input.name!, password: input.password }, now, deps.config.passwordHashCost);
    const already = await trx
      .selectFrom('memberships')
      .select('role')
      .where('workspace_id', '=', invite.workspace_id)
      .where('person_id', '=', person.id)
      .executeTakeFirst();
    if (already) throw conflict('You are already a member of this workspace.');

    await trx.updateTable('invites').set({ accepted_by: person.id }).where('id', '=', invite.id).execute();
    await trx
      .insertInto('memberships')
      .values({ workspace_id: invite.workspace_id, person_id: person.id, role: invite.role, joined_at: now.toISOString() })
      .execute();
    await recordAudit(trx, now, meta, {
      workspaceId: invite.workspace_id,
      actor: { type: 'person', id: person.id, name: person.name },
      action: 'invite.accepted',
      target: { type: 'invite', id: invite.id },
      details: { role: invite.role, newAccount: !existing },
    });
    const session = await createSession(trx, deps, person.id, meta);
    return { person, session, workspaceId: invite.workspace_id };
  });
}

function toView(row: { id: string; email: string; role: string; expires_at: string; created_at: string; invited_by: string }): InviteView {
  return { id: row.id, email: row.email, role: row.role as Exclude<Role, 'owner'>, expiresAt: row.expires_at, createdAt: row.created_at, invitedBy: row.invited_by };
}
