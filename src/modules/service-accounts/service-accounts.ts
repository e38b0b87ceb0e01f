import type { Role } from '../../abilities.js';
import type { Deps } from '../../deps.js';
import { lockParentRow } from '../../db/parent-row-lock.js';
import { rowLimit } from '../../db/row-limit.js';
import type { Executor, ServiceAccountsTable } from '../../db/schema.js';
import { AppError, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { recordAudit, type Actor, type RequestMeta } from '../audit/audit.js';

/** A machine user: keys issued for it follow its role, not any person's (docs/design.md §3). */
export interface ServiceAccountView {
  id: string;
  name: string;
  role: Exclude<Role, 'owner'>;
  createdBy: string;
  createdAt: string;
}

export interface AdminContext {
  workspaceId: string;
  actor: Actor;
  meta: RequestMeta;
}

const toView = (row: ServiceAccountsTable): ServiceAccountView => ({
  id: row.id,
  name: row.name,
  role: row.role as Exclude<Role, 'owner'>,
  createdBy: row.created_by,
  createdAt: row.created_at,
});

/** Up to `limit` service accounts in id order, after the id `after`. */
export async function listServiceAccounts(deps: Deps, workspaceId: string, page: { limit: number; after?: string }): Promise<ServiceAccountView[]> {
  let query = deps.db.selectFrom('service_accounts').selectAll().where('workspace_id', '=', workspaceId).where('deleted_at', 'is', null);
  if (page.after !== undefined) query = query.where('id', '>', page.after);
  const rows = await query.orderBy('id').limit(rowLimit(page.limit)).execute();
  return rows.map(toView);
}

export async function createServiceAccount(deps: Deps, context: AdminContext, input: { name: string; role: Exclude<Role, 'owner'> }): Promise<ServiceAccountView> {
  const now = deps.clock.now();
  const row: ServiceAccountsTable = {
    id: newId('sa', now.getTime()),
    workspace_id: context.workspaceId,
    name: input.name.trim(),
    role: input.role,
    created_by: context.actor.id ?? 'system',
    created_at: now.toISOString(),
    deleted_at: null,
  };
  await deps.db.transaction().execute(async (trx) => {
    await checkRoomForServiceAccount(deps, trx, context.workspaceId);
    await trx.insertInto('service_accounts').values(row).execute();
    await recordAudit(trx, now, context.meta, { workspaceId: context.workspaceId, actor: context.actor, action: 'service_account.created', target: { type: 'service_account', id: row.id }, details: { name: row.name, role: row.role } });
  });
  return toView(row);
}

/**
 * A workspace holds at most `serviceAccountsPerWorkspace` service accounts; deleted ones do not
 * count, so deleting one frees room. Concurrent creates are counted one after the other
 * (lockParentRow on the workspace).
 */
async function checkRoomForServiceAccount(deps: Deps, trx: Executor, workspaceId: string): Promise<void> {
  await lockParentRow(trx, 'workspaces', workspaceId);
  const { count } = await trx
    .selectFrom('service_accounts')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  const limit = deps.config.serviceAccountsPerWorkspace;
  if (Number(count) >= limit) {
    throw new AppError('CONFLICT', `This workspace already has ${limit} service accounts, the most it may hold (PLAINBASE_SERVICE_ACCOUNTS_PER_WORKSPACE). Delete one it no longer uses first.`, { limit });
  }
}

export async function updateServiceAccount(
  deps: Deps,
  context: AdminContext,
  id: string,
  input: { name?: string; role?: Exclude<Role, 'owner'> },
): Promise<ServiceAccountView> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('service_accounts').selectAll().where('workspace_id', '=', context.workspaceId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    if (!row) throw notFound('service account');
    const changes = { name: input.name?.trim() ?? row.name, role: input.role ?? row.role };
    await trx.updateTable('service_accounts').set(changes).where('id', '=', id).execute();
    await recordAudit(trx, now, context.meta, {
      workspaceId: context.workspaceId,
      actor: context.actor,
      action: 'service_account.updated',
      target: { type: 'service_account', id },
      details: { from: { name: row.name, role: row.role }, to: changes },
    });
    return toView({ ...row, ...changes });
  });
}

/** Deleting a service account stops its keys at once: they are revoked with it. */
export async function deleteServiceAccount(deps: Deps, context: AdminContext, id: string): Promise<void> {
  const now = deps.clock.now().toISOString();
  await deps.db.transaction().execute(async (trx) => {
    const deleted = await trx.updateTable('service_accounts').set({ deleted_at: now }).where('workspace_id', '=', context.workspaceId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    if (Number(deleted.numUpdatedRows) === 0) throw notFound('service account');
    const keys = await trx.selectFrom('api_keys').select('id').where('service_account_id', '=', id).where('revoked_at', 'is', null).execute();
    if (keys.length) {
      const ids = keys.map((key) => key.id);
      await trx.updateTable('api_keys').set({ revoked_at: now }).where('id', 'in', ids).execute();
      await trx.deleteFrom('api_key_secrets').where('key_id', 'in', ids).execute();
    }
    await recordAudit(trx, new Date(now), context.meta, {
      workspaceId: context.workspaceId,
      actor: context.actor,
      action: 'service_account.deleted',
      target: { type: 'service_account', id },
      details: { revokedKeys: keys.map((key) => key.id) },
    });
  });
}
