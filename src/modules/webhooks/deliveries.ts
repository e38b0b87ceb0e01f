import type { Deps } from '../../deps.js';
import type { DeliveriesTable } from '../../db/schema.js';
import { rowLimit } from '../../db/row-limit.js';
import { newDelivery } from '../../delivery/deliveries-store.js';
import { AppError, notFound } from '../../errors.js';
import { recordAudit } from '../audit/audit.js';
import { notifyEventsWritten } from '../events/outbox-signal.js';
import { findWebhook, type WebhookContext } from './webhooks.js';

export type DeliveryState = 'pending' | 'succeeded' | 'dead';

export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  webhookId: string;
  state: DeliveryState;
  attemptCount: number;
  nextAttemptAt: string | null;
  createdAt: string;
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

const toView = (row: DeliveriesTable): DeliveryView => ({
  id: row.id,
  eventId: row.event_id,
  eventType: row.event_type,
  webhookId: row.webhook_id,
  state: row.state as DeliveryState,
  attemptCount: row.attempt_count,
  nextAttemptAt: row.state === 'pending' ? row.next_attempt_at : null,
  createdAt: row.created_at,
});

/** A webhook's deliveries, newest first, with optional filters. */
export async function listDeliveries(
  deps: Deps,
  workspaceId: string,
  webhookId: string,
  query: { state?: DeliveryState; eventType?: string; limit: number; before?: string },
): Promise<DeliveryView[]> {
  await findWebhook(deps.db, workspaceId, webhookId);
  let select = deps.db.selectFrom('deliveries').selectAll().where('workspace_id', '=', workspaceId).where('webhook_id', '=', webhookId);
  if (query.state) select = select.where('state', '=', query.state);
  if (query.eventType) select = select.where('event_type', '=', query.eventType);
  if (query.before) select = select.where('id', '<', query.before);
  return (await select.orderBy('id', 'desc').limit(rowLimit(query.limit)).execute()).map(toView);
}

export async function getDelivery(deps: Deps, workspaceId: string, webhookId: string, deliveryId: string): Promise<DeliveryView & { attempts: AttemptView[] }> {
  const row = await deps.db
    .selectFrom('deliveries')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('webhook_id', '=', webhookId)
    .where('id', '=', deliveryId)
    .executeTakeFirst();
  if (!row) throw notFound('delivery');
  const attempts = await deps.db.selectFrom('delivery_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('id').execute();
  return {
    ...toView(row),
    attempts: attempts.map((attempt) => ({
      id: attempt.id,
      at: attempt.at,
      status: attempt.status,
      durationMs: attempt.duration_ms,
      responseHeaders: JSON.parse(attempt.response_headers) as Record<string, string>,
      responseBody: attempt.response_body,
      error: attempt.error,
    })),
  };
}

/**
 * Sends a logged delivery's event again as a new delivery with a fresh attempt count. It keeps
 * the event's id, so the receiver sees the same x-baas-delivery and can drop a duplicate.
 */
export async function replayDelivery(deps: Deps, context: WebhookContext, webhookId: string, deliveryId: string): Promise<DeliveryView> {
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
    const replay = newDelivery(context.workspaceId, webhook.id, original.event_id, original.event_type, deps.clock.now().toISOString());
    await trx.insertInto('deliveries').values(replay).execute();
    await recordAudit(trx, deps.clock.now(), context.meta, {
      workspaceId: context.workspaceId,
      actor: context.actor,
      action: 'webhook.delivery_replayed',
      target: { type: 'webhook', id: webhookId },
      details: { deliveryId, replayId: replay.id, eventId: original.event_id },
    });
    return toView(replay);
  });
  notifyEventsWritten();
  return replay;
}
