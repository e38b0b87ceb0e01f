import { sql } from 'kysely';
import { insertRows } from '../../db/insert-rows.js';
import type { AuditLogTable, Executor } from '../../db/schema.js';
import { rowLimit } from '../../db/row-limit.js';
import { newId } from '../../ids.js';

/** `anonymous`: a public submission (no credential); its address is the entry's ip. */
export type ActorType = 'person' | 'key' | 'service_account' | 'system' | 'anonymous';

export interface Actor {
  type: ActorType;
  id: string | null;
  name: string | null;
  /** For a key: the person or service account it acts for, kept in the entry's details. */
  via?: { type: 'person' | 'service_account'; id: string };
  /** For an anonymous caller: the address it came from (also the entry's ip). */
  ip?: string | null;
}

/** Where a change came from: copied into every audit entry it causes. */
export interface RequestMeta {
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

export interface AuditInput {
  workspaceId: string | null;
  actor: Actor;
  action: string;
  target?: { type: string; id: string } | null;
  details?: Record<string, unknown>;
}

export interface AuditEntry {
  id: string;
  at: string;
  actor: Actor;
  action: string;
  target: { type: string; id: string } | null;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  details: Record<string, unknown>;
}

export const AUDIT_COLUMNS = [
  'id', 'workspace_id', 'at', 'actor_type', 'actor_id', 'actor_name', 'action', 'target_type', 'target_id', 'ip', 'user_agent', 'request_id', 'details',
] as const;

/**
 * Writes one audit entry. Call it with the transaction that makes the change, so the change and
 * its entry commit together. `details` must never hold a secret.
 */
export async function recordAudit(executor: Executor, at: Date, meta: RequestMeta, input: AuditInput): Promise<void> {
  // insertRows, not the query builder: every write made with a key writes an entry.
  await insertRows(executor, 'audit_log', AUDIT_COLUMNS, [newAuditRow(at, meta, input)]);
}

/** An audit entry's row, for writers that insert it themselves (AUDIT_COLUMNS). */
export const newAuditRow = (at: Date, meta: RequestMeta, input: AuditInput): AuditLogTable => ({
  id: newId('aud', at.getTime()),
  workspace_id: input.workspaceId,
  at: at.toISOString(),
  actor_type: input.actor.type,
  actor_id: input.actor.id,
  actor_name: input.actor.name,
  action: input.action,
  target_type: input.target?.type ?? null,
  target_id: input.target?.id ?? null,
  ip: meta.ip,
  user_agent: meta.userAgent,
  request_id: meta.requestId,
  details: JSON.stringify(input.actor.via ? { ...input.details, via: input.actor.via } : (input.details ?? {})),
});

export interface AuditQuery {
  actor?: string;
  action?: string;
  since?: string;
  until?: string;
  limit: number;
  /** Entries strictly older than this id. */
  before?: string;
}

/** A workspace's entries, newest first. Ids sort by time, so the id is the cursor. */
export async function listAudit(executor: Executor, workspaceId: string, query: AuditQuery): Promise<AuditEntry[]> {
  let select = executor.selectFrom('audit_log').selectAll().where('workspace_id', '=', workspaceId);
  if (query.actor) select = select.where('actor_id', '=', query.actor);
  if (query.action) {
    // `member.*` is a prefix match; substr avoids LIKE, whose escaping differs per engine.
    const prefix = query.action.endsWith('*') ? query.action.slice(0, -1) : null;
    select = prefix !== null
      ? select.where(sql<string>`substr(action, 1, ${prefix.length})`, '=', prefix)
      : select.where('action', '=', query.action);
  }
  if (query.since) select = select.where('at', '>=', query.since);
  if (query.until) select = select.where('at', '<', query.until);
  if (query.before) select = select.where('id', '<', query.before);
  const rows = await select.orderBy('id', 'desc').limit(rowLimit(query.limit)).execute();
  return rows.map((row) => ({
    id: row.id,
    at: row.at,
    actor: row.actor_type === 'anonymous' ? { type: 'anonymous', id: null, name: null, ip: row.ip } : { type: row.actor_type as ActorType, id: row.actor_id, name: row.actor_name },
    action: row.action,
    target: row.target_type && row.target_id ? { type: row.target_type, id: row.target_id } : null,
    ip: row.ip,
    userAgent: row.user_agent,
    requestId: row.request_id,
    details: JSON.parse(row.details) as Record<string, unknown>,
  }));
}
