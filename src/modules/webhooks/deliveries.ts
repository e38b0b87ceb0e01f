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
}

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

function toView(row: DeliveriesTable, webhookEnabled: boolean): DeliveryView {
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
  };
}

/** A webhook's deliveries, newest first, with optional filters. */
export async function listDeliveries(
  deps: Deps,
  workspaceId: string,
  webhookId: string,
  query: { state?: DeliveryState; eventType?: string; limit: number; before?: string },
): Promise<DeliveryView[]> {
  const webhook = await findWebhook(deps.db, workspaceId, webhookId);
  let select = deps.db.selectFrom('deliveries').selectAll().where('workspace_id', '=', workspaceId).where('webhook_id', '=', webhookId);
  if (query.state) select = select.where('state', '=', query.state);
  if (query.eventType) select = select.where('event_type', '=', query.eventType);
  if (query.before) select = select.where('id', '<', query.before);
  const rows = await select.orderBy('id', 'desc').limit(rowLimit(query.limit)).execute();
  return rows.map((row) => toView(row, Boolean(webhook.enabled)));
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
  return {
    ...toView(row, Boolean(webhook.enabled)),
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
      if (attempting) return { delivery: toView(original, Boolean(webhook.enabled)), rescheduled: false };
      const changes = { next_attempt_at: now.toISOString(), updated_at: now.toISOString() };
      await trx.updateTable('deliveries').set(changes).where('id', '=', original.id).execute();
      await audit({ rescheduled: true });
      return { delivery: toView({ ...original, ...changes }, Boolean(webhook.enabled)), rescheduled: true };
    }
    const replay = newDelivery(context.workspaceId, webhook.id, original.event_id, original.event_type, now.toISOString());
    await trx.insertInto('deliveries').values(replay).execute();
    await audit({ replayId: replay.id });
    return { delivery: toView(replay, Boolean(webhook.enabled)), rescheduled: false };
  });
  notifyEventsWritten();
  return replay;
}
