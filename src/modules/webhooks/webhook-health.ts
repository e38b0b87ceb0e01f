import { sql, type SqlBool } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Executor, WebhooksTable } from '../../db/schema.js';

/**
 * A webhook's health, named by what happens to its deliveries (docs/webhooks.md, "Health"):
 * - `new`: no attempt in the log (30 days);
 * - `healthy`: its last attempt succeeded;
 * - `retrying`: its last attempts failed and every delivery since is still being retried;
 * - `failing`: a delivery gave up (dead) since its last success;
 * - `disabled`: switched off (by a person, 25 dead deliveries in a row, or a restore).
 */
export type HealthState = 'new' | 'healthy' | 'retrying' | 'failing' | 'disabled';

export interface WebhookHealth {
  state: HealthState;
  lastAttemptAt: string | null;
  /** The last attempt's HTTP status; null when it got none (see lastError). */
  lastStatus: number | null;
  /** Why the last attempt failed when it got no status (refused, timed out, not allowed), or `HTTP 404`. */
  lastError: string | null;
  /** Failed attempts since the last success (all logged attempts when none succeeded). */
  failureStreak: number;
  /** The first failed attempt of that streak; null when the last attempt succeeded. */
  failingSince: string | null;
  /** Deliveries that failed at least once and wait for their next attempt. */
  waitingRetries: number;
  /** When the earliest of those is next attempted; null when none waits (or the webhook is off). */
  nextAttemptAt: string | null;
}

export interface HourCount {
  /** The hour's start, UTC. */
  hour: string;
  succeeded: number;
  failed: number;
}

export const HEALTH_HOURS = 24;

/** 2xx, as the worker counts a success (delivery/send.ts). */
const succeeded = sql<SqlBool>`status >= 200 and status < 300`;
const isSuccess = (status: number | null) => status !== null && status >= 200 && status < 300;

/**
 * Attempts a failure streak is counted over, newest first. A receiver down while an import fans
 * out can fail hundreds of thousands of attempts before the webhook is switched off; walking them
 * all on every list of webhooks would make the list as slow as the log is long.
 */
export const STREAK_WINDOW = 10_000;

/**
 * Health of the given webhooks (a page of the list, or one). Per webhook, along
 * delivery_attempts_webhook (migration 0023): the last attempt, and when it failed, the streak
 * counted over at most the newest STREAK_WINDOW + 1 attempts; then one grouped read of the
 * workspace's pending deliveries (deliveries_pending) for the retries waiting. None walks more
 * than that, whatever the size of the log.
 */
export async function healthOf(executor: Executor, workspaceId: string, webhooks: readonly WebhooksTable[]): Promise<Map<string, WebhookHealth>> {
  const healths = new Map<string, WebhookHealth>();
  if (webhooks.length === 0) return healths;
  const waiting = await waitingRetries(executor, workspaceId, webhooks.map((webhook) => webhook.id));
  for (const webhook of webhooks) {
    const attempts = executor.selectFrom('delivery_attempts').where('workspace_id', '=', workspaceId).where('webhook_id', '=', webhook.id);
    const last = await attempts.select(['at', 'status', 'error']).orderBy('at', 'desc').limit(1).executeTakeFirst();
    const streak = last && !isSuccess(last.status) ? await failureStreak(executor, workspaceId, webhook.id) : { count: 0, since: null };
    const retries = webhook.enabled ? waiting.get(webhook.id) : undefined;
    healths.set(webhook.id, {
      state: stateOf(webhook, last !== undefined, streak.count),
      lastAttemptAt: last?.at ?? null,
      lastStatus: last?.status ?? null,
      lastError: last?.error ?? null,
      failureStreak: streak.count,
      failingSince: streak.since,
      waitingRetries: retries?.count ?? 0,
      nextAttemptAt: retries?.next ?? null,
    });
  }
  return healths;
}

/**
 * The failed attempts after the last success among the newest STREAK_WINDOW + 1, and the first of
 * them. A streak longer than the window reads STREAK_WINDOW, failing since the oldest attempt read.
 */
async function failureStreak(executor: Executor, workspaceId: string, webhookId: string): Promise<{ count: number; since: string | null }> {
  const row = await executor
    .with('recent', (db) =>
      db.selectFrom('delivery_attempts').select(['at', 'status']).where('workspace_id', '=', workspaceId).where('webhook_id', '=', webhookId).orderBy('at', 'desc').limit(STREAK_WINDOW + 1),
    )
    .selectFrom('recent')
    .select((eb) => [eb.fn.countAll<number | string>().as('count'), eb.fn.min('at').as('since')])
    .where('at', '>', (eb) => eb.fn.coalesce(eb.selectFrom('recent').select((inner) => inner.fn.max('at').as('at')).where(succeeded), sql.lit('')))
    .executeTakeFirstOrThrow();
  return { count: Math.min(Number(row.count), STREAK_WINDOW), since: (row.since as string | null) ?? null };
}

function stateOf(webhook: WebhooksTable, attempted: boolean, failureStreak: number): HealthState {
  if (!webhook.enabled) return 'disabled';
  // The dead-in-a-row counter: a delivery gave up, and nothing succeeded since.
  if (webhook.dead_streak > 0) return 'failing';
  if (failureStreak > 0) return 'retrying';
  return attempted ? 'healthy' : 'new';
}

/** Per webhook, its deliveries that failed and wait for a retry: how many, and the next one's time. */
async function waitingRetries(executor: Executor, workspaceId: string, webhookIds: string[]): Promise<Map<string, { count: number; next: string | null }>> {
  const rows = await executor
    .selectFrom('deliveries')
    .select((eb) => ['webhook_id', eb.fn.countAll<number | string>().as('count'), eb.fn.min('next_attempt_at').as('next')])
    .where('workspace_id', '=', workspaceId)
    .where('state', '=', 'pending')
    .where('attempt_count', '>', 0)
    .where('webhook_id', 'in', webhookIds)
    .groupBy('webhook_id')
    .execute();
  return new Map(rows.map((row) => [row.webhook_id, { count: Number(row.count), next: row.next as string | null }]));
}

/** One webhook's health with its attempts of the last 24 hours, hour by hour (oldest first). */
export async function webhookHealth(deps: Deps, workspaceId: string, webhook: WebhooksTable): Promise<WebhookHealth & { hours: HourCount[] }> {
  const health = (await healthOf(deps.db, workspaceId, [webhook])).get(webhook.id)!;
  const now = deps.clock.now();
  const currentHour = Math.floor(now.getTime() / 3_600_000) * 3_600_000;
  const first = new Date(currentHour - (HEALTH_HOURS - 1) * 3_600_000).toISOString();
  // Stored times are ISO 8601 in UTC, so their first 13 characters name the hour.
  const hourOf = sql<string>`substr(at, 1, 13)`;
  const rows = await deps.db
    .selectFrom('delivery_attempts')
    .select((eb) => [
      hourOf.as('hour'),
      eb.fn.countAll<number | string>().as('total'),
      eb.fn.sum<number | string | null>(sql`case when ${succeeded} then 1 else 0 end`).as('succeeded'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('webhook_id', '=', webhook.id)
    .where('at', '>=', first)
    .groupBy(hourOf)
    .execute();
  const counted = new Map(rows.map((row) => [row.hour, { total: Number(row.total), succeeded: Number(row.succeeded ?? 0) }]));
  const hours: HourCount[] = [];
  for (let i = 0; i < HEALTH_HOURS; i += 1) {
    const hour = new Date(currentHour - (HEALTH_HOURS - 1 - i) * 3_600_000).toISOString();
    const count = counted.get(hour.slice(0, 13)) ?? { total: 0, succeeded: 0 };
    hours.push({ hour, succeeded: count.succeeded, failed: count.total - count.succeeded });
  }
  return { ...health, hours };
}
