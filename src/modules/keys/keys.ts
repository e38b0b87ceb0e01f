import { ROLE_ABILITIES, ROLE_RANK, type Role, type Scope } from '../../abilities.js';
import type { Deps } from '../../deps.js';
import type { ApiKeysTable, Executor } from '../../db/schema.js';
import { lockParentRow } from '../../db/parent-row-lock.js';
import { rowLimit } from '../../db/row-limit.js';
import { AppError, conflict, forbidden, invalidRequest, notFound } from '../../errors.js';
import { hasPrefix, newId } from '../../ids.js';
import { recordAudit, type Actor, type RequestMeta } from '../audit/audit.js';
import { hashToken, issueToken, previewOf, type KeyMode } from './token.js';

export const MAX_GRACE_SECONDS = 7 * 24 * 3600;

export type KeyState = 'active' | 'expired' | 'revoked';

export interface KeyView {
  id: string;
  name: string;
  mode: KeyMode;
  preview: string;
  scopes: Scope[];
  collections: string[] | null;
  expiresAt: string | null;
  serviceAccountId: string | null;
  createdBy: string;
  createdAt: string;
  lastUsedAt: string | null;
  lastUsedIp: string | null;
  state: KeyState;
}

/** The person managing keys, with their role now. */
export interface KeyManager {
  workspaceId: string;
  personId: string;
  role: Role;
  actor: Actor;
  meta: RequestMeta;
  /** May manage every key of the workspace (keys:manage), not only their own. */
  managesAll: boolean;
}

export function keyState(row: Pick<ApiKeysTable, 'revoked_at' | 'expires_at'>, now: Date): KeyState {
  if (row.revoked_at) return 'revoked';
  if (row.expires_at && row.expires_at <= now.toISOString()) return 'expired';
  return 'active';
}

export function toKeyView(row: ApiKeysTable, now: Date): KeyView {
  return {
    id: row.id,
    name: row.name,
    mode: row.mode as KeyMode,
    preview: row.preview,
    scopes: JSON.parse(row.scopes) as Scope[],
    collections: row.collections ? (JSON.parse(row.collections) as string[]) : null,
    expiresAt: row.expires_at,
    serviceAccountId: row.service_account_id,
    createdBy: row.created_by,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    lastUsedIp: row.last_used_ip,
    state: keyState(row, now),
  };
}

export interface CreateKeyInput {
  name: string;
  scopes: Scope[];
  expiresAt?: string;
  collections?: string[];
  serviceAccountId?: string;
  mode?: KeyMode;
}

/**
 * Creates a key and answers its token, the only time it is ever shown. Every scope must be one
 * the creator holds now (docs/design.md §4, rule 3); a service account's key also only what its role allows.
 */
export async function createKey(deps: Deps, manager: KeyManager, input: CreateKeyInput): Promise<{ key: KeyView; secret: string }> {
  const now = deps.clock.now();
  const scopes = [...new Set(input.scopes)];
  const grantable = (role: Role) => {
    const notHeld = scopes.filter((scope) => !ROLE_ABILITIES[role].has(scope));
    if (notHeld.length) throw forbidden(`Your role (${role}) cannot grant ${notHeld.join(', ')}.`);
  };
  grantable(manager.role);
  // Compared as instants: the text may carry any offset (11:00+02:00 is before 10:00Z).
  if (input.expiresAt && Date.parse(input.expiresAt) <= now.getTime()) {
    throw invalidRequest('expiresAt must be in the future.', { field: 'body.expiresAt' });
  }

  return deps.db.transaction().execute(async (trx) => {
    // The creator's membership, read again and held until the key is in: a removal running at the
    // same moment either comes first (no key) or waits, and then revokes this key with the others.
    grantable(await lockedRole(trx, deps, manager));
    await checkRoomForKey(deps, trx, manager.workspaceId, now);
    if (input.serviceAccountId) {
      if (!manager.managesAll) throw forbidden('Only owners and admins issue keys for service accounts.');
      const account = await trx
        .selectFrom('service_accounts')
        .select(['role'])
        .where('id', '=', input.serviceAccountId)
        .where('workspace_id', '=', manager.workspaceId)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (!account) throw notFound('service account');
      const beyond = scopes.filter((scope) => !ROLE_ABILITIES[account.role as Role].has(scope));
      if (beyond.length) throw forbidden(`The service account's role (${account.role}) does not allow ${beyond.join(', ')}.`);
    }
    const collections = input.collections ? await resolveCollectionIds(trx, manager.workspaceId, input.collections) : null;

    const id = newId('key', now.getTime());
    const secret = issueToken(input.mode ?? 'live', id);
    const row: ApiKeysTable = {
      id,
      workspace_id: manager.workspaceId,
      name: input.name.trim(),
      mode: input.mode ?? 'live',
      preview: previewOf(secret),
      scopes: JSON.stringify(scopes),
      collections: collections ? JSON.stringify(collections) : null,
      expires_at: input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
      service_account_id: input.serviceAccountId ?? null,
      created_by: manager.personId,
      created_at: now.toISOString(),
      revoked_at: null,
      last_used_at: null,
      last_used_ip: null,
    };
    await trx.insertInto('api_keys').values(row).execute();
    await trx
      .insertInto('api_key_secrets')
      .values({ key_id: id, secret_hash: hashToken(secret, deps.config.keyPepper), created_at: row.created_at, expires_at: null })
      .execute();
    await recordAudit(trx, now, manager.meta, {
      workspaceId: manager.workspaceId,
      actor: manager.actor,
      action: 'key.created',
      target: { type: 'key', id },
      details: { name: row.name, scopes, collections, expiresAt: row.expires_at, serviceAccountId: row.service_account_id, mode: row.mode },
    });
    return { key: toKeyView(row, now), secret };
  });
}

/**
 * A workspace holds at most `apiKeysPerWorkspace` active keys, so that no tenant can fill the key
 * tables (and the key check's cache) by numbers. Revoked and expired keys do not count: they can
 * never be used again, so revoking one frees room. Concurrent creates are counted one after the
 * other (lockParentRow on the workspace).
 */
async function checkRoomForKey(deps: Deps, trx: Executor, workspaceId: string, now: Date): Promise<void> {
  await lockParentRow(trx, 'workspaces', workspaceId);
  const { count } = await trx
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
    .where('workspace_id', '=', workspaceId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now.toISOString())]))
    .executeTakeFirstOrThrow();
  const limit = deps.config.apiKeysPerWorkspace;
  if (Number(count) >= limit) {
    throw new AppError('CONFLICT', `This workspace already has ${limit} active API keys, the most it may hold (PLAINBASE_API_KEYS_PER_WORKSPACE). Revoke keys it no longer uses first.`, { limit });
  }
}

/** The manager's role now, locking their membership row where the engine can (SQLite runs one write transaction at a time anyway). */
async function lockedRole(executor: Executor, deps: Deps, manager: KeyManager): Promise<Role> {
  let query = executor.selectFrom('memberships').select('role').where('workspace_id', '=', manager.workspaceId).where('person_id', '=', manager.personId);
  if (deps.dialect.supportsRowLocks) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new AppError('NOT_FOUND', 'No such workspace, or you are not a member of it.');
  return row.role as Role;
}

/** Restriction lists name collections by id or name; they are stored as ids (docs/design.md §3). */
async function resolveCollectionIds(executor: Executor, workspaceId: string, refs: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const ref of [...new Set(refs)]) {
    const row = await executor
      .selectFrom('collections')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where(hasPrefix(ref, 'col') ? 'id' : 'name', '=', ref)
      .executeTakeFirst();
    if (!row) throw invalidRequest(`No collection ${ref} in this workspace.`, { field: 'body.collections' });
    ids.push(row.id);
  }
  return ids;
}

export async function listKeys(deps: Deps, manager: KeyManager, options: { limit: number; after?: string; newestFirst?: boolean }): Promise<KeyView[]> {
  let query = deps.db.selectFrom('api_keys').selectAll().where('workspace_id', '=', manager.workspaceId);
  if (!manager.managesAll) query = query.where('created_by', '=', manager.personId).where('service_account_id', 'is', null);
  // `after` is the last id of the previous page, in the order asked for.
  if (options.after) query = query.where('id', options.newestFirst ? '<' : '>', options.after);
  const now = deps.clock.now();
  return (await query.orderBy('id', options.newestFirst ? 'desc' : 'asc').limit(rowLimit(options.limit)).execute()).map((row) => toKeyView(row, now));
}

/**
 * A key the manager may see: their own, or any when they manage all keys. Others' are NOT_FOUND.
 * `lock` holds the row until the transaction ends, so that two rotations (or a rotation and a
 * revocation) of one key run one after the other, in any process; SQLite runs one write
 * transaction at a time anyway.
 */
async function findManagedKey(executor: Executor, manager: KeyManager, keyId: string, lock = false): Promise<ApiKeysTable> {
  let query = executor.selectFrom('api_keys').selectAll().where('workspace_id', '=', manager.workspaceId).where('id', '=', keyId);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row || (!manager.managesAll && (row.created_by !== manager.personId || row.service_account_id))) throw notFound('key');
  return row;
}

export async function getKey(deps: Deps, manager: KeyManager, keyId: string): Promise<KeyView> {
  return toKeyView(await findManagedKey(deps.db, manager, keyId), deps.clock.now());
}

/**
 * A person may rotate only a key they could have created (docs/security.md): one whose role
 * behind it (its creator's now, or its service account's) does not outrank theirs, with scopes
 * their role allows. Rotating hands over a working secret, so an admin rotating the owner's key
 * would get a key that acts as the owner. Revoking takes nothing over, and stays allowed.
 */
async function checkMayRotate(executor: Executor, manager: KeyManager, row: ApiKeysTable): Promise<void> {
  const behind = row.service_account_id
    ? await executor.selectFrom('service_accounts').select('role').where('workspace_id', '=', manager.workspaceId).where('id', '=', row.service_account_id).executeTakeFirst()
    : await executor.selectFrom('memberships').select('role').where('workspace_id', '=', manager.workspaceId).where('person_id', '=', row.created_by).executeTakeFirst();
  const role = behind?.role as Role | undefined;
  if (role && ROLE_RANK[role] > ROLE_RANK[manager.role]) {
    throw forbidden(`This key acts with the role ${role}, which outranks yours (${manager.role}): you may revoke it, not rotate it.`);
  }
  const beyond = (JSON.parse(row.scopes) as Scope[]).filter((scope) => !ROLE_ABILITIES[manager.role].has(scope));
  if (beyond.length) throw forbidden(`Your role (${manager.role}) cannot grant ${beyond.join(', ')}, which this key holds: you may revoke it, not rotate it.`);
}

/**
 * A new secret for the same key. The previous secret keeps working until min(now + grace, the
 * key's expiry); secrets from earlier rotations stop at once.
 */
export async function rotateKey(deps: Deps, manager: KeyManager, keyId: string, graceSeconds: number): Promise<{ key: KeyView; secret: string }> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const row = await findManagedKey(trx, manager, keyId, deps.dialect.supportsRowLocks);
    await checkMayRotate(trx, manager, row);
    const state = keyState(row, now);
    if (state !== 'active') throw conflict(`A${state === 'expired' ? 'n expired' : ' revoked'} key cannot be rotated.`);
    const graceEnd = new Date(now.getTime() + graceSeconds * 1000).toISOString();
    const previousUntil = row.expires_at && row.expires_at < graceEnd ? row.expires_at : graceEnd;
    // End every earlier grace, then put the current secret on its grace.
    await trx.deleteFrom('api_key_secrets').where('key_id', '=', keyId).where('expires_at', 'is not', null).execute();
    if (graceSeconds > 0) {
      await trx.updateTable('api_key_secrets').set({ expires_at: previousUntil }).where('key_id', '=', keyId).where('expires_at', 'is', null).execute();
    } else {
      await trx.deleteFrom('api_key_secrets').where('key_id', '=', keyId).execute();
    }
    const secret = issueToken(row.mode as KeyMode, keyId);
    await trx
      .insertInto('api_key_secrets')
      .values({ key_id: keyId, secret_hash: hashToken(secret, deps.config.keyPepper), created_at: now.toISOString(), expires_at: null })
      .execute();
    const preview = previewOf(secret);
    await trx.updateTable('api_keys').set({ preview }).where('id', '=', keyId).execute();
    await recordAudit(trx, now, manager.meta, {
      workspaceId: manager.workspaceId,
      actor: manager.actor,
      action: 'key.rotated',
      target: { type: 'key', id: keyId },
      details: { gracePeriodSeconds: graceSeconds, previousSecretValidUntil: graceSeconds > 0 ? previousUntil : now.toISOString() },
    });
    return { key: toKeyView({ ...row, preview }, now), secret };
  });
}

/** Revoking kills every secret of the key at once; the key stays listed, and its audit trail too. */
export async function revokeKey(deps: Deps, manager: KeyManager, keyId: string): Promise<KeyView> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const row = await findManagedKey(trx, manager, keyId, deps.dialect.supportsRowLocks);
    if (row.revoked_at) return toKeyView(row, now);
    await trx.updateTable('api_keys').set({ revoked_at: now.toISOString() }).where('id', '=', keyId).execute();
    await trx.deleteFrom('api_key_secrets').where('key_id', '=', keyId).execute();
    await recordAudit(trx, now, manager.meta, { workspaceId: manager.workspaceId, actor: manager.actor, action: 'key.revoked', target: { type: 'key', id: keyId } });
    return toKeyView({ ...row, revoked_at: now.toISOString() }, now);
  });
}

export const keyNotValid = () => new AppError('INVALID_API_KEY', 'The API key is not valid: unknown, malformed, revoked or rotated out.');
