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

export async function removeMember(deps: Deps, workspaceId: string, actor: Actor, personId: string, meta: RequestMeta): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const current = await findRole(trx, workspaceId, personId);
    if (!current) throw notFound('member');
    if (current === 'owner') throw new AppError('FORBIDDEN', 'The owner cannot be removed; transfer ownership first.');
    await trx.deleteFrom('memberships').where('workspace_id', '=', workspaceId).where('person_id', '=', personId).execute();
    await recordAudit(trx, deps.clock.now(), meta, {
      workspaceId,
      actor,
      action: 'member.removed',
      target: { type: 'person', id: personId },
      details: { role: current },
    });
  });
}
