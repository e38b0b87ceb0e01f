import type { Role } from '../../abilities.js';
import { rowLimit } from '../../db/row-limit.js';
import type { Deps } from '../../deps.js';
import { AppError, forbidden, notFound } from '../../errors.js';
import { recordAudit, type Actor, type RequestMeta } from '../audit/audit.js';
import { findRole } from '../workspaces/workspaces.js';

export interface MemberView {
  personId: string;
  email: string;
  name: string;
  role: Role;
  joinedAt: string;
}

const memberRows = (deps: Deps, workspaceId: string) =>
  deps.db
    .selectFrom('memberships')
    .innerJoin('people', 'people.id', 'memberships.person_id')
    .select(['people.id', 'people.email', 'people.name', 'memberships.role', 'memberships.joined_at'])
    .where('memberships.workspace_id', '=', workspaceId);

const toMemberView = (row: { id: string; email: string; name: string; role: string; joined_at: string }): MemberView =>
  ({ personId: row.id, email: row.email, name: row.name, role: row.role as Role, joinedAt: row.joined_at });

/** Up to `limit` members in the order they joined (then by id), after the member at `after`. */
export async function listMembers(deps: Deps, workspaceId: string, page: { limit: number; after?: { joinedAt: string; personId: string } }): Promise<MemberView[]> {
  let query = memberRows(deps, workspaceId);
  const { after } = page;
  if (after) {
    query = query.where((eb) => eb.or([
      eb('memberships.joined_at', '>', after.joinedAt),
      eb.and([eb('memberships.joined_at', '=', after.joinedAt), eb('people.id', '>', after.personId)]),
    ]));
  }
  const rows = await query.orderBy('memberships.joined_at').orderBy('people.id').limit(rowLimit(page.limit)).execute();
  return rows.map(toMemberView);
}

export async function getMember(deps: Deps, workspaceId: string, personId: string): Promise<MemberView> {
  const row = await memberRows(deps, workspaceId).where('people.id', '=', personId).executeTakeFirst();
  if (!row) throw notFound('member');
  return toMemberView(row);
}

/** The owner's role changes only through a transfer of ownership, and nobody is made owner here. */
export async function changeRole(
  deps: Deps,
  workspaceId: string,
  actor: Actor,
  personId: string,
  role: Exclude<Role, 'owner'>,
  meta: RequestMeta,
): Promise<MemberView> {
  await deps.db.transaction().execute(async (trx) => {
    const current = await findRole(trx, workspaceId, personId);
    if (!current) throw notFound('member');
    if (current === 'owner') throw forbidden("The owner's role changes only by transferring ownership.");
    if (current === role) return;
    await trx
      .updateTable('memberships')
      .set({ role })
      .where('workspace_id', '=', workspaceId)
      .where('person_id', '=', personId)
      .execute();
    await recordAudit(trx, deps.clock.now(), meta, {
      workspaceId,
      actor,
      action: 'member.role_changed',
      target: { type: 'person', id: personId },
      details: { from: current, to: role },
    });
  });
  return getMember(deps, workspaceId, personId);
}

/**
 * Removes a person from a workspace, and revokes for good every key they created there (their
 * service accounts' keys stay: those depend on no one person). A revoked key never comes back,
 * so inviting the person again gives them their role back but none of their old keys: whoever
 * still holds one of those secrets has lost it with the removal (docs/security.md). Each
 * revocation is audited as key.revoked, with the removal as its reason.
 */
export async function removeMember(deps: Deps, workspaceId: string, actor: Actor, personId: string, meta: RequestMeta): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const current = await findRole(trx, workspaceId, personId);
    if (!current) throw notFound('member');
    if (current === 'owner') throw new AppError('FORBIDDEN', 'The owner cannot be removed; transfer ownership first.');
    await trx.deleteFrom('memberships').where('workspace_id', '=', workspaceId).where('person_id', '=', personId).execute();
    await recordAudit(trx, now, meta, {
      workspaceId,
      actor,
      action: 'member.removed',
      target: { type: 'person', id: personId },
      details: { role: current },
    });
    const keys = await trx
      .updateTable('api_keys')
      .set({ revoked_at: now.toISOString() })
      .where('workspace_id', '=', workspaceId)
      .where('created_by', '=', personId)
      .where('service_account_id', 'is', null)
      .where('revoked_at', 'is', null)
      .returning('id')
      .execute();
    if (keys.length === 0) return;
    await trx.deleteFrom('api_key_secrets').where('key_id', 'in', keys.map((key) => key.id)).execute();
    for (const key of keys) {
      await recordAudit(trx, now, meta, {
        workspaceId,
        actor,
        action: 'key.revoked',
        target: { type: 'key', id: key.id },
        details: { reason: 'member_removed', personId },
      });
    }
  });
}
