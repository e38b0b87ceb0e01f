import type { Deps } from '../deps.js';
import type { DeliveriesTable } from '../db/schema.js';
import { madeBefore, newId } from '../ids.js';
import { recordAudit } from '../modules/audit/audit.js';
import { DEAD_IN_A_ROW_LIMIT, nextAttemptAt } from './schedule.js';
import type { AttemptResult } from './send.js';

/** Logs are kept 30 days (SPEC.md §8). */
export const LOG_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** What an attempt needs, read fresh at attempt time: the webhook's URL and secret may have changed. */
export interface DueDelivery {
  id: string;
  workspaceId: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  attemptCount: number;
  url: string;
  secret: string;
  message: string;
}

/**
 * Turns new outbox events into deliveries: one per (event, enabled webhook that watches it).
 * On PostgreSQL, workers in several processes each take different events (SKIP LOCKED).
 * Returns how many events it handled.
 */
export async function fanOutEvents(deps: Deps, batchSize: number): Promise<number> {
  const now = deps.clock.now().toISOString();
  return deps.db.transaction().execute(async (trx) => {
    let pending = trx
      .selectFrom('events')
      .select(['id', 'workspace_id', 'collection_id', 'type', 'created_at'])
      .where('fanned_out_at', 'is', null)
      .orderBy('id')
      .limit(batchSize);
    if (deps.dialect.supportsSkipLocked) pending = pending.forUpdate().skipLocked();
    const events = await pending.execute();
    if (events.length === 0) return 0;

    const workspaceIds = [...new Set(events.map((event) => event.workspace_id))];
    const webhooks = await trx
      .selectFrom('webhooks')
      .select(['id', 'workspace_id', 'events', 'collections'])
      .where('workspace_id', 'in', workspaceIds)
      .where('enabled', '=', 1)
      .execute();
    const watching = webhooks.map((webhook) => ({
      id: webhook.id,
      workspaceId: webhook.workspace_id,
      events: new Set(JSON.parse(webhook.events) as string[]),
      collections: webhook.collections ? new Set(JSON.parse(webhook.collections) as string[]) : null,
    }));

    const deliveries: DeliveriesTable[] = [];
    for (const event of events) {
      for (const webhook of watching) {
        if (webhook.workspaceId !== event.workspace_id) continue;
        // A webhook hears of changes made after it was registered, not of older ones still in the outbox.
        if (!madeBefore(webhook.id, event.id)) continue;
        if (!webhook.events.has('*') && !webhook.events.has(event.type)) continue;
        if (webhook.collections && !webhook.collections.has(event.collection_id)) continue;
        deliveries.push(newDelivery(event.workspace_id, webhook.id, event.id, event.type, now));
      }
    }
    for (let start = 0; start < deliveries.length; start += 500) {
      await trx.insertInto('deliveries').values(deliveries.slice(start, start + 500)).execute();
    }
    await trx.updateTable('events').set({ fanned_out_at: now }).where('id', 'in', events.map((event) => event.id)).execute();
    return events.length;
  });
}

export function newDelivery(workspaceId: string, webhookId: string, eventId: string, eventType: string, now: string): DeliveriesTable {
  return {
    id: newId('dlv', Date.parse(now)),
    workspace_id: workspaceId,
    webhook_id: webhookId,
    event_id: eventId,
    event_type: eventType,
    state: 'pending',
    attempt_count: 0,
    next_attempt_at: now,
    locked_until: null,
    created_at: now,
    updated_at: now,
  };
}

export interface Claim {
  /** The most deliveries to claim. */
  limit: number;
  leaseMs: number;
  perWebhook: number;
  /** Calls the claiming worker has in flight, per webhook id. */
  inFlight: ReadonlyMap<string, number>;
}

/**
 * Claims deliveries that are due, for `leaseMs`: until then no other worker attempts them. A
 * worker that dies mid-attempt loses its lease, and the delivery is attempted again (at least
 * once). No webhook gets more than `perWebhook` calls in flight, counting the worker's `inFlight`;
 * what is due beyond that stays unclaimed, for the next round or another worker.
 */
export async function claimDueDeliveries(deps: Deps, claim: Claim): Promise<DueDelivery[]> {
  const { limit, leaseMs, perWebhook, inFlight } = claim;
  if (limit <= 0) return [];
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  return deps.db.transaction().execute(async (trx) => {
    let due = trx
      .selectFrom('deliveries')
      .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
      .select(['deliveries.id', 'deliveries.webhook_id'])
      .where('deliveries.state', '=', 'pending')
      .where('deliveries.next_attempt_at', '<=', nowIso)
      .where((eb) => eb.or([eb('deliveries.locked_until', 'is', null), eb('deliveries.locked_until', '<=', nowIso)]))
      .where('webhooks.enabled', '=', 1)
      .orderBy('deliveries.next_attempt_at')
      .limit(limit);
    const saturated = [...inFlight].filter(([, count]) => count >= perWebhook).map(([id]) => id);
    if (saturated.length) due = due.where('deliveries.webhook_id', 'not in', saturated);
    if (deps.dialect.supportsSkipLocked) due = due.forUpdate(['deliveries']).skipLocked();
    const room = new Map<string, number>();
    const ids: string[] = [];
    for (const row of await due.execute()) {
      const left = room.get(row.webhook_id) ?? perWebhook - (inFlight.get(row.webhook_id) ?? 0);
      room.set(row.webhook_id, left - 1);
      if (left > 0) ids.push(row.id);
    }
    if (ids.length === 0) return [];
    await trx.updateTable('deliveries').set({ locked_until: new Date(now.getTime() + leaseMs).toISOString() }).where('id', 'in', ids).execute();
    const rows = await trx
      .selectFrom('deliveries')
      .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
      .innerJoin('events', 'events.id', 'deliveries.event_id')
      .select([
        'deliveries.id', 'deliveries.workspace_id', 'deliveries.webhook_id', 'deliveries.event_id', 'deliveries.event_type',
        'deliveries.attempt_count', 'webhooks.url', 'webhooks.secret', 'events.message',
      ])
      .where('deliveries.id', 'in', ids)
      .execute();
    return rows.map((row) => ({
      id: row.id,
      workspaceId: row.workspace_id,
      webhookId: row.webhook_id,
      eventId: row.event_id,
      eventType: row.event_type,
      attemptCount: row.attempt_count,
      url: row.url,
      secret: row.secret,
      message: row.message,
    }));
  });
}

/**
 * Logs an attempt and moves the delivery on: succeeded, retried on the schedule, or dead. A
 * success clears the webhook's dead-in-a-row counter; the 25th dead delivery in a row switches
 * the webhook off and writes `webhook.auto_disabled` to the audit log, in the same transaction.
 */
export async function recordAttempt(deps: Deps, delivery: DueDelivery, result: AttemptResult, attemptedAt: Date): Promise<void> {
  const at = attemptedAt.toISOString();
  const attemptCount = delivery.attemptCount + 1;
  const retryAt = result.ok ? null : nextAttemptAt(attemptedAt, attemptCount);
  const state = result.ok ? 'succeeded' : retryAt ? 'pending' : 'dead';
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('delivery_attempts')
      .values({
        id: newId('att', attemptedAt.getTime()),
        delivery_id: delivery.id,
        workspace_id: delivery.workspaceId,
        at,
        status: result.status,
        duration_ms: result.durationMs,
        response_headers: JSON.stringify(result.responseHeaders),
        response_body: result.responseBody,
        error: result.error,
      })
      .execute();
    await trx
      .updateTable('deliveries')
      .set({ state, attempt_count: attemptCount, next_attempt_at: retryAt?.toISOString() ?? null, locked_until: null, updated_at: at })
      .where('id', '=', delivery.id)
      .execute();
    if (state === 'succeeded') {
      await trx.updateTable('webhooks').set({ dead_streak: 0 }).where('id', '=', delivery.webhookId).where('dead_streak', '>', 0).execute();
    } else if (state === 'dead') {
      const webhook = await trx
        .updateTable('webhooks')
        .set((eb) => ({ dead_streak: eb('dead_streak', '+', 1) }))
        .where('id', '=', delivery.webhookId)
        .returning(['dead_streak', 'enabled'])
        .executeTakeFirst();
      if (webhook && webhook.enabled && webhook.dead_streak >= DEAD_IN_A_ROW_LIMIT) {
        await trx.updateTable('webhooks').set({ enabled: 0, disabled_reason: 'auto', updated_at: at }).where('id', '=', delivery.webhookId).execute();
        await recordAudit(trx, attemptedAt, { ip: null, userAgent: null, requestId: null }, {
          workspaceId: delivery.workspaceId,
          actor: { type: 'system', id: null, name: 'delivery worker' },
          action: 'webhook.auto_disabled',
          target: { type: 'webhook', id: delivery.webhookId },
          details: { deadInARow: webhook.dead_streak },
        });
      }
    }
  });
}

/** Removes attempt logs, finished deliveries and delivered events older than 30 days. */
export async function purgeOldLogs(deps: Deps): Promise<void> {
  const cutoff = new Date(deps.clock.now().getTime() - LOG_RETENTION_MS).toISOString();
  await deps.db.deleteFrom('delivery_attempts').where('at', '<', cutoff).execute();
  await deps.db.deleteFrom('deliveries').where('state', 'in', ['succeeded', 'dead']).where('updated_at', '<', cutoff).execute();
  await deps.db
    .deleteFrom('events')
    .where('fanned_out_at', '<', cutoff)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('deliveries').select('deliveries.id').whereRef('deliveries.event_id', '=', 'events.id'))))
    .execute();
}
