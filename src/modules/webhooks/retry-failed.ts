import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/schema.js';
import { invalidRequest } from '../../errors.js';
import { recordAudit } from '../audit/audit.js';
import { notifyEventsWritten } from '../events/outbox-signal.js';
import { newDelivery } from './delivery-queue.js';
import { findWebhook, type WebhookContext } from './webhooks.js';

/** Deliveries one call sends again at most, oldest first; a second call goes on with the rest. */
export const MAX_RETRIED_PER_CALL = 10_000;

export interface RetryFailedResult {
  /** Deliveries that gave up since the time and were not sent again since. */
  matched: number;
  /** Of those, sent again now as new deliveries (0 for a dry run). */
  retried: number;
  dryRun: boolean;
}

/**
 * Sends again every delivery of a webhook that gave up (dead) at or after `since`, each as a new
 * delivery of the same event, exactly as a replay of it would (deliveries.ts replayDelivery): the
 * worker claims it fairly, checks its URL and signs it like any other. A dead delivery whose event
 * this webhook already has a newer delivery of (an earlier retry or replay, pending or done) is
 * left out, so calling twice queues nothing twice. At most MAX_RETRIED_PER_CALL, oldest first.
 */
export async function retryFailedDeliveries(deps: Deps, context: WebhookContext, webhookId: string, input: { since: string; dryRun?: boolean }): Promise<RetryFailedResult> {
  const now = deps.clock.now();
  const since = sinceTime(input.since, now);
  const dryRun = input.dryRun ?? false;
  const result = await deps.db.transaction().execute(async (trx) => {
    // Two calls at once take turns (PostgreSQL; SQLite runs one transaction at a time): the second
    // then sees the first one's deliveries and leaves their events out.
    if (!dryRun && deps.dialect.supportsRowLocks) {
      await trx.selectFrom('webhooks').select('id').where('workspace_id', '=', context.workspaceId).where('id', '=', webhookId).forNoKeyUpdate().execute();
    }
    const webhook = await findWebhook(trx, context.workspaceId, webhookId);
    const failed = deadSince(trx, context.workspaceId, webhook.id, since);
    const { count } = await failed.select((eb) => eb.fn.countAll<number | string>().as('count')).executeTakeFirstOrThrow();
    const matched = Number(count);
    if (dryRun || matched === 0) return { matched, retried: 0, dryRun };
    const rows = await failed.select(['d.event_id', 'd.event_type']).orderBy('d.updated_at').orderBy('d.id').limit(MAX_RETRIED_PER_CALL).execute();
    const at = now.toISOString();
    const retries = rows.map((row) => newDelivery(context.workspaceId, webhook.id, row.event_id, row.event_type, at));
    for (let start = 0; start < retries.length; start += 500) {
      await trx.insertInto('deliveries').values(retries.slice(start, start + 500)).execute();
    }
    await recordAudit(trx, now, context.meta, {
      workspaceId: context.workspaceId,
      actor: context.actor,
      action: 'webhook.failed_retried',
      target: { type: 'webhook', id: webhook.id },
      details: { since, matched, retried: retries.length },
    });
    return { matched, retried: retries.length, dryRun };
  });
  if (result.retried > 0) notifyEventsWritten();
  return result;
}

/**
 * The webhook's deliveries that died at or after `since` (their last attempt, `updated_at`) and are
 * the newest delivery of their event to this webhook.
 */
function deadSince(executor: Executor, workspaceId: string, webhookId: string, since: string) {
  return executor
    .selectFrom('deliveries as d')
    .where('d.workspace_id', '=', workspaceId)
    .where('d.webhook_id', '=', webhookId)
    .where('d.state', '=', 'dead')
    .where('d.updated_at', '>=', since)
    .where(({ not, exists, selectFrom }) =>
      not(exists(
        selectFrom('deliveries as newer')
          .select(sql`1`.as('one'))
          .whereRef('newer.workspace_id', '=', 'd.workspace_id')
          .whereRef('newer.event_id', '=', 'd.event_id')
          .whereRef('newer.webhook_id', '=', 'd.webhook_id')
          .whereRef('newer.id', '>', 'd.id'),
      )));
}

/** `since` as stored (UTC, milliseconds); a time that cannot be read, or one still to come, is a 400. */
function sinceTime(value: string, now: Date): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalidRequest('since is not a time this service can compare.', { field: 'body.since' });
  if (ms > now.getTime()) throw invalidRequest('since is in the future: no delivery can have failed after now.', { field: 'body.since' });
  return new Date(ms).toISOString();
}
