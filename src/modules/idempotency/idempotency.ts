import { createHash } from 'node:crypto';
import { sql, type SqlBool } from 'kysely';
import type { ExpiringRows } from '../../db/expiring-rows.js';
import type { Executor } from '../../db/schema.js';
import { conflict } from '../../errors.js';
import { idLength } from '../../ids.js';

/** How long a key is remembered, as Stripe does. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

/** Stored answers past their window, for housekeeping to delete. */
export const EXPIRED_ANSWERS: ExpiringRows = {
  name: 'idempotencyAnswers',
  table: 'idempotency_keys',
  key: ['workspace_id', 'caller_id', 'key'],
  expired: (now) => sql<SqlBool>`created_at <= ${new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString()}`,
};

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
  const body = JSON.parse(row.body) as unknown;
  if (isErasedAnswer(body)) {
    // Creating again would bring back what was erased; answering the stored answer would show it.
    throw conflict('The record this request created was deleted for good, and its answer with it; send a new Idempotency-Key to create it again.', {
      header: 'idempotency-key',
      recordId: body.id,
      erased: true,
    });
  }
  return { status: row.status, body };
}

const isErasedAnswer = (body: unknown): body is { id: string; erased: true } =>
  typeof body === 'object' && body !== null && (body as { erased?: unknown }).erased === true;

/** Whose stored answers to erase: one record's, or those of every record of a collection. */
export interface ErasedAnswers {
  workspaceId: string;
  collectionId: string;
  recordId: string | null;
}

/**
 * The only answers stored are a created record's, and each begins with the record's id and its
 * collection's (`{"id":"rec_…","collectionId":"col_…",`, RECORD_BODY's first two fields), so they
 * are found by position: the same SQL on both engines, and text that the record's data, written
 * after them, cannot fake.
 */
const ANSWER_OPENING = '{"id":"';
const COLLECTION_AT = ANSWER_OPENING.length + idLength('rec') + 1;

/**
 * Replaces the stored answers that hold the erased records' data with a tombstone,
 * `{"id":"rec_…","erased":true}`, kept for the rest of the window: a replay of the create is
 * then refused (409 CONFLICT, details.erased) rather than answered with the data or run again.
 * Expired answers not yet purged are erased as well.
 */
export async function eraseStoredAnswers(executor: Executor, erased: ErasedAnswers): Promise<number> {
  const collectionPart = `","collectionId":"${erased.collectionId}"`;
  const matches = erased.recordId === null
    ? sql`substr(body, 1, ${sql.lit(ANSWER_OPENING.length + 4)}) = ${`${ANSWER_OPENING}rec_`}
        and substr(body, ${sql.lit(COLLECTION_AT)}, ${sql.lit(collectionPart.length)}) = ${collectionPart}`
    : sql`substr(body, 1, ${sql.lit(COLLECTION_AT - 1 + collectionPart.length)}) = ${`${ANSWER_OPENING}${erased.recordId}${collectionPart}`}`;
  const result = await sql`update idempotency_keys
    set body = cast(${ANSWER_OPENING} as text) || substr(body, ${sql.lit(ANSWER_OPENING.length + 1)}, ${sql.lit(idLength('rec'))}) || cast(${'","erased":true}'} as text)
    where workspace_id = ${erased.workspaceId} and ${matches}`.execute(executor);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Stores the response in the transaction that made the change, so the change and the memory of
 * it commit together. A concurrent request with the same key then fails on the primary key and
 * replays this one instead of creating a second record.
 *
 * Before storing it, deletes this key's own expired answer, which would stand in the new one's
 * way; every other expired answer is housekeeping's (modules/housekeeping), in short batches, so
 * that no request's transaction deletes a workspace's backlog.
 */
export async function storeResponse(executor: Executor, key: IdempotencyKey, now: Date, response: StoredResponse): Promise<void> {
  const cutoff = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
  await executor
    .deleteFrom('idempotency_keys')
    .where('workspace_id', '=', key.workspaceId)
    .where('caller_id', '=', key.callerId)
    .where('key', '=', key.key)
    .where('created_at', '<=', cutoff)
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
