import { createHash } from 'node:crypto';
import type { Executor } from '../../db/schema.js';
import { conflict } from '../../errors.js';

/** How long a key is remembered, as Stripe does. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

export interface IdempotencyKey {
  workspaceId: string;
  /** The person or key calling: two callers never share a key space. */
  callerId: string;
  key: string;
  /** A digest of the method, path and body, to catch a key reused for a different request. */
  requestHash: string;
}

export interface StoredResponse {
  status: number;
  body: unknown;
}

export function hashRequest(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${JSON.stringify(body ?? null)}`).digest('hex');
}

/** The first response given under this key within the window, if any. */
export async function findStoredResponse(executor: Executor, key: IdempotencyKey, now: Date): Promise<StoredResponse | null> {
  const row = await executor
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('workspace_id', '=', key.workspaceId)
    .where('caller_id', '=', key.callerId)
    .where('key', '=', key.key)
    .where('created_at', '>', new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString())
    .executeTakeFirst();
  if (!row) return null;
  if (row.request_hash !== key.requestHash) {
    throw conflict('This Idempotency-Key was already used for a different request.', { header: 'idempotency-key' });
  }
  return { status: row.status, body: JSON.parse(row.body) };
}

/**
 * Stores the response in the transaction that made the change, so the change and the memory of
 * it commit together. A concurrent request with the same key then fails on the primary key and
 * replays this one instead of creating a second record.
 */
export async function storeResponse(executor: Executor, key: IdempotencyKey, now: Date, response: StoredResponse): Promise<void> {
  await executor
    .deleteFrom('idempotency_keys')
    .where('workspace_id', '=', key.workspaceId)
    .where('caller_id', '=', key.callerId)
    .where('key', '=', key.key)
    .where('created_at', '<=', new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString())
    .execute();
  await executor
    .insertInto('idempotency_keys')
    .values({
      workspace_id: key.workspaceId,
      caller_id: key.callerId,
      key: key.key,
      request_hash: key.requestHash,
      status: response.status,
      body: JSON.stringify(response.body),
      created_at: now.toISOString(),
    })
    .execute();
}

export async function purgeExpiredIdempotencyKeys(executor: Executor, now: Date): Promise<void> {
  await executor.deleteFrom('idempotency_keys').where('created_at', '<=', new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString()).execute();
}
