import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { DeliveriesTable } from '../../db/schema.js';
import { rowLimit } from '../../db/row-limit.js';
import { newDelivery } from './delivery-queue.js';
import { AppError, notFound } from '../../errors.js';
import { recordAudit } from '../audit/audit.js';
import { notifyEventsWritten } from '../events/outbox-signal.js';
import { isErasedEventData } from '../events/erased-records.js';
import { eventMessageText } from '../events/outbox.js';
import { findWebhook, type WebhookContext } from './webhooks.js';

export type DeliveryState = 'pending' | 'succeeded' | 'dead';

export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  webhookId: string;
  state: DeliveryState;
  /** Pending while its webhook is off: kept, and sent once the webhook is enabled again. */
  held: boolean;
  attemptCount: number;
  /** When the next attempt is due; null when none is coming (finished, or held). */
  nextAttemptAt: string | null;
  createdAt: string;
  /** Its last attempt's HTTP status, null when it got none or was not attempted yet. */
  lastStatus: number | null;
  /** Why its last attempt failed (`HTTP 404`, a refused connection, a timeout); null after a success. */
  lastError: string | null;
}

type LastAttempt = { last_status: number | null; last_error: string | null };
const NOT_ATTEMPTED: LastAttempt = { last_status: null, last_error: null };

/** A delivery with its attempts and the exact body every attempt sent. */
export interface DeliveryDetail extends DeliveryView {
  body: string;
  attempts: AttemptView[];
}

export interface AttemptView {
  id: string;
  at: string;
  status: number | null;
  durationMs: number;
  responseHeaders: Record<string, string>;
  responseBody: string;
  error: string | null;
}

function toView(row: DeliveriesTable, webhookEnabled: boolean, last: LastAttempt): DeliveryView {
  const held = row.state === 'pending' && !webhookEnabled;
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    webhookId: row.webhook_id,
    state: row.state as DeliveryState,
    held,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.state === 'pending' && !held ? row.next_attempt_at : null,
    createdAt: row.created_at,
    lastStatus: last.last_status,
    lastError: last.last_error,
  };
}

/** The status and error of a delivery's newest attempt: one probe of delivery_attempts_delivery each. */
function lastAttemptOf(column: 'status' | 'error', alias: 'last_status' | 'last_error') {
  return sql<never>`(select ${sql.ref(`delivery_attempts.${column}`)} from delivery_attempts where delivery_attempts.delivery_id = deliveries.id order by delivery_attempts.id desc limit 1)`.as(alias);
}

/** A webhook's deliveries, newest first, with optional filters. */
export async function listDeliveries(
  deps: Deps,
  workspaceId: string,
  webhookId: string,
  query: { state?: DeliveryState; eventType?: string; limit: number; before?: string },
): Promise<DeliveryView[]> {
  const webhook = await findWebhook(deps.db, workspaceId, webhookId);
  let select = deps.db
    .selectFrom('deliveries')
    .selectAll('deliveries')
    .select([lastAttemptOf('status', 'last_status'), lastAttemptOf('error', 'last_error')])
    .where('workspace_id', '=', workspaceId)
    .where('webhook_id', '=', webhookId);
  if (query.state) select = select.where('state', '=', query.state);
  if (query.eventType) select = select.where('event_type', '=', query.eventType);
  if (query.before) select = select.where('id', '<', query.before);
  const rows = await select.orderBy('id', 'desc').limit(rowLimit(query.limit)).execute();
  return rows.map((row) => toView(row, Boolean(webhook.enabled), row as LastAttempt));
}

export async function getDelivery(deps: Deps, workspaceId: string, webhookId: string, deliveryId: string): Promise<DeliveryDetail> {
  const webhook = await findWebhook(deps.db, workspaceId, webhookId);
  const row = await deps.db
    .selectFrom('deliveries')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('webhook_id', '=', webhookId)
    .where('id', '=', deliveryId)
    .executeTakeFirst();
  if (!row) throw notFound('delivery');
  const attempts = await deps.db.selectFrom('delivery_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('id').execute();
  // A delivery keeps its event while it exists (the purge removes events no delivery refers to).
  const event = await deps.db
    .selectFrom('events')
    .select(['id', 'type', 'created_at', 'workspace_id', 'collection_id', 'data'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', row.event_id)
    .executeTakeFirstOrThrow();
  // A record deleted for good: an answer logged in the instant of its erasure (on PostgreSQL, an
  // attempt committed beside it) must not show what the receiver echoed.
  const erased = isErasedEventData(event.data);
  const last = attempts.at(-1);
  return {
    ...toView(row, Boolean(webhook.enabled), last ? { last_status: last.status, last_error: last.error } : NOT_ATTEMPTED),
    body: eventMessageText(event),
    attempts: attempts.map((attempt) => ({
      id: attempt.id,
      at: attempt.at,
      status: attempt.status,
      durationMs: attempt.duration_ms,
      responseHeaders: JSON.parse(attempt.response_headers) as Record<string, string>,
      responseBody: erased ? '' : attempt.response_body,
      error: attempt.error,
    })),
  };
}

/**
 * Sends a logged delivery's event again. A finished delivery (succeeded or dead) gets a new
 * delivery with a fresh attempt count; it keeps the event's id, so the receiver sees the same
 * x-baas-delivery and can drop a duplicate. A delivery still waiting for a retry is not doubled:
 * its next attempt is brought forward to now (`rescheduled`). One being attempted right now is
 * left as it is.
 */
export async function replayDelivery(deps: Deps, context: WebhookContext, webhookId: string, deliveryId: string): Promise<{ delivery: DeliveryView; rescheduled: boolean }> {
  const replay = await deps.db.transaction().execute(async (trx) => {
    const webhook = await findWebhook(trx, context.workspaceId, webhookId);
    const original = await trx
      .selectFrom('deliveries')
      .selectAll()
      .where('workspace_id', '=', context.workspaceId)
      .where('webhook_id', '=', webhookId)
      .where('id', '=', deliveryId)
      .executeTakeFirst();
    if (!original) throw notFound('delivery');
    const event = await trx.selectFrom('events').select('id').where('id', '=', original.event_id).executeTakeFirst();
    if (!event) throw new AppError('CONFLICT', 'The event of this delivery is older than the 30 days logs are kept; it cannot be replayed.');
    const now = deps.clock.now();
    const audit = (details: Record<string, unknown>) =>
      recordAudit(trx, now, context.meta, {
        workspaceId: context.workspaceId,
        actor: context.actor,
        action: 'webhook.delivery_replayed',
        target: { type: 'webhook', id: webhookId },
        details: { deliveryId, eventId: original.event_id, ...details },
      });
    if (original.state === 'pending') {
      const attempting = original.locked_until !== null && original.locked_until > now.toISOString();
      const last = (await trx
        .selectFrom('delivery_attempts')
        .select(['status as last_status', 'error as last_error'])
        .where('delivery_id', '=', original.id)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst()) ?? NOT_ATTEMPTED;
      if (attempting) return { delivery: toView(original, Boolean(webhook.enabled), last), rescheduled: false };
      const changes = { next_attempt_at: now.toISOString(), updated_at: now.toISOString() };
      await trx.updateTable('deliveries').set(changes).where('id', '=', original.id).execute();
      await audit({ rescheduled: true });
      return { delivery: toView({ ...original, ...changes }, Boolean(webhook.enabled), last), rescheduled: true };
    }
    const replay = newDelivery(context.workspaceId, webhook.id, original.event_id, original.event_type, now.toISOString());
    await trx.insertInto('deliveries').values(replay).execute();
    await audit({ replayId: replay.id });
    return { delivery: toView(replay, Boolean(webhook.enabled), NOT_ATTEMPTED), rescheduled: false };
  });
  notifyEventsWritten();
  return replay;
}
