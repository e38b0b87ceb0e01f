import type { Role } from '../../abilities.js';
import type { Deps } from '../../deps.js';
import { rowLimit } from '../../db/row-limit.js';
import { directQuery } from '../../db/direct-query.js';
import { lockParentRow } from '../../db/parent-row-lock.js';
import type { Executor } from '../../db/schema.js';
import { AppError, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { recordAudit, type Actor, type RequestMeta } from '../audit/audit.js';
import type { Person } from '../people/people.js';

export interface WorkspaceView {
  id: string;
  name: string;
  role: Role;
  createdAt: string;
}

const personActor = (person: Person): Actor => ({ type: 'person', id: person.id, name: person.name });

/** Creates a workspace owned by `owner`, in the caller's transaction. */
export async function insertWorkspace(
  executor: Executor,
  at: Date,
  meta: RequestMeta,
  owner: Person,
  name: string,
  actor: Actor = personActor(owner),
): Promise<WorkspaceView> {
  const workspace = { id: newId('ws', at.getTime()), name: name.trim(), created_at: at.toISOString() };
  await executor.insertInto('workspaces').values(workspace).execute();
  await executor
    .insertInto('memberships')
    .values({ workspace_id: workspace.id, person_id: owner.id, role: 'owner', joined_at: workspace.created_at })
    .execute();
  await recordAudit(executor, at, meta, {
    workspaceId: workspace.id,
    actor,
    action: 'workspace.created',
    target: { type: 'workspace', id: workspace.id },
    details: { name: workspace.name, owner: owner.id },
  });
  return { id: workspace.id, name: workspace.name, role: 'owner', createdAt: workspace.created_at };
}

export async function createWorkspace(deps: Deps, person: Person, name: string, meta: RequestMeta): Promise<WorkspaceView> {
  return deps.db.transaction().execute(async (trx) => {
    await checkRoomForWorkspace(deps, trx, person.id);
    return insertWorkspace(trx, deps.clock.now(), meta, person, name);
  });
}

/**
 * A person owns at most `workspacesPerPerson` workspaces, so that one sign-up cannot make tenants
 * by the hundred. Only owned workspaces count: being invited into others' costs nothing, and
 * handing one over (transferOwnership) frees room. Concurrent creates are counted one after the
 * other (lockParentRow on the person).
 */
async function checkRoomForWorkspace(deps: Deps, trx: Executor, personId: string): Promise<void> {
  await lockParentRow(trx, 'people', personId);
  const { count } = await trx
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
    .where('person_id', '=', personId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  const limit = deps.config.workspacesPerPerson;
  if (Number(count) >= limit) {
    throw new AppError('CONFLICT', `You already own ${limit} workspaces, the most one person may own (PLAINBASE_WORKSPACES_PER_PERSON). Hand one you no longer need to another member, or use collections to keep data apart within one workspace.`, { limit });
  }
}

/** The person's workspaces in id order: all of them, or a page of `limit` after the id `after`. */
export async function listWorkspaces(executor: Executor, personId: string, page?: { limit: number; after?: string }): Promise<WorkspaceView[]> {
  let query = executor
    .selectFrom('memberships')
    .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
    .select(['workspaces.id', 'workspaces.name', 'workspaces.created_at', 'memberships.role'])
    .where('memberships.person_id', '=', personId);
  if (page?.after !== undefined) query = query.where('workspaces.id', '>', page.after);
  query = query.orderBy('workspaces.id');
  const rows = await (page ? query.limit(rowLimit(page.limit)) : query).execute();
  return rows.map((row) => ({ id: row.id, name: row.name, role: row.role as Role, createdAt: row.created_at }));
}

/** Whether the person owns at least one workspace. */
export async function ownsAnyWorkspace(executor: Executor, personId: string): Promise<boolean> {
  const row = await executor.selectFrom('memberships').select('workspace_id').where('person_id', '=', personId).where('role', '=', 'owner').limit(1).executeTakeFirst();
  return row !== undefined;
}

const findMembershipRole = directQuery<{ role: string }>('plainbase_find_role', (parameter) => `
  select role from memberships where workspace_id = ${parameter(1)} and person_id = ${parameter(2)}`);

/**
 * The person's role in the workspace, read fresh on every request so changes apply at once; a
 * direct query (db/direct-query.ts), since every signed-in workspace request runs it. Inside a
 * transaction (`executor` a Transaction) it reads through that transaction.
 */
export async function findRole(executor: Executor, workspaceId: string, personId: string): Promise<Role | null> {
  const [row] = await findMembershipRole.run(executor, [workspaceId, personId]);
  return (row?.role as Role | undefined) ?? null;
}

/** The owner hands the workspace to another member, who becomes owner; the old owner becomes admin. */
export async function transferOwnership(
  deps: Deps,
  workspaceId: string,
  owner: Person,
  newOwnerId: string,
  meta: RequestMeta,
): Promise<void> {
  if (newOwnerId === owner.id) throw new AppError('CONFLICT', 'You already own this workspace.');
  await deps.db.transaction().execute(async (trx) => {
    const role = await findRole(trx, workspaceId, newOwnerId);
    if (!role) throw notFound('member');
    await trx
      .updateTable('memberships')
      .set({ role: 'admin' })
      .where('workspace_id', '=', workspaceId)
      .where('person_id', '=', owner.id)
      .execute();
    await trx
      .updateTable('memberships')
      .set({ role: 'owner' })
      .where('workspace_id', '=', workspaceId)
      .where('person_id', '=', newOwnerId)
      .execute();
    await recordAudit(trx, deps.clock.now(), meta, {
      workspaceId,
      actor: personActor(owner),
      action: 'workspace.ownership_transferred',
      target: { type: 'person', id: newOwnerId },
      details: { from: owner.id, to: newOwnerId, previousRole: role },
    });
  });
}
