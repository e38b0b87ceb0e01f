import { sql, type SqlBool } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Dialect } from '../../db/dialect.js';
import type { ExpiringRows } from '../../db/expiring-rows.js';
import { transactionPreferringIndexOrder } from '../../db/index-order-transaction.js';
import { insertRows } from '../../db/insert-rows.js';
import type { DeliveriesTable, DeliveryAttemptsTable, Executor } from '../../db/schema.js';
import { madeBefore, newId } from '../../ids.js';
import { recordAudit } from '../audit/audit.js';
import { erasedAmong } from '../events/erased-records.js';
import { notifyEventsSequenced } from '../events/outbox-signal.js';
import { eventMessageText } from '../events/outbox.js';
import { claimWorkspaces, dueDeliveries } from './fair-claim.js';
import { takeWaitingEvents } from './fair-fan-out.js';
import { DEAD_IN_A_ROW_LIMIT, nextAttemptAt } from '../../delivery/schedule.js';
import type { AttemptResult } from '../../delivery/send.js';

/** Logs are kept 30 days (docs/design.md §7). */
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

/** What one fan-out did: events handled, and deliveries made for them (0 where no webhook listens). */
export interface FanOut {
  events: number;
  deliveries: number;
  /** Whether more events may be waiting now: the worker goes on at once rather than sleep. */
  more: boolean;
}

/** Turns at most `batchSize` new outbox events into deliveries, in one transaction (see fanOut). */
export async function fanOutEvents(deps: Deps, batchSize: number): Promise<FanOut> {
  return (await runRound(deps, { fanOut: batchSize, finished: [], claim: null })).fannedOut;
}

/**
 * Turns new outbox events into deliveries: one per (event, webhook that watches it). A webhook
 * that is off gets its deliveries too: they are held (never claimed while it is off) and sent
 * once it is enabled again, so nothing that happens meanwhile is lost.
 * On PostgreSQL, workers in several processes each take different events (SKIP LOCKED).
 */
async function fanOut(trx: Executor, dialect: Dialect, key: object, at: Date, batchSize: number): Promise<FanOut> {
  const now = at.toISOString();
  // Each workspace with waiting events gets its share of the batch (fair-fan-out.ts).
  const { events, more } = await takeWaitingEvents(trx, dialect, key, batchSize);
  if (events.length === 0) return { events: 0, deliveries: 0, more };

  const workspaceIds = [...new Set(events.map((event) => event.workspace_id))];
  const webhooks = await trx
    .selectFrom('webhooks')
    .select(['id', 'workspace_id', 'events', 'collections'])
    .where('workspace_id', 'in', workspaceIds)
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
  await insertRows(trx, 'deliveries', DELIVERY_COLUMNS, deliveries);
  await markFannedOut(trx, dialect, events.map((event) => event.id), now);
  return { events: events.length, deliveries: deliveries.length, more };
}

/**
 * Marks events fanned out and gives them their places in the sequence, after every event
 * sequenced before (see migration 0010), in id order within the batch.
 */
async function markFannedOut(trx: Executor, dialect: Dialect, ids: string[], now: string): Promise<void> {
  if (dialect.sequencingLock) await dialect.sequencingLock.execute(trx);
  const { last } = await trx
    .selectFrom('events')
    .select((eb) => eb.fn.max('seq').as('last'))
    .where('seq', 'is not', null)
    .executeTakeFirstOrThrow();
  await sql`update events set fanned_out_at = ${now}, seq = ${Number(last ?? 0)} + ranked.place
    from (select id, row_number() over (order by id) as place from events where id in (${sql.join(ids)})) as ranked
    where events.id = ranked.id`.execute(trx);
  await dialect.notifyEventsSequenced?.execute(trx);
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
  perWorkspace: number;
  /** Calls the claiming worker has in flight, per webhook id. */
  inFlight: ReadonlyMap<string, number>;
  /** Calls the claiming worker has in flight, per workspace id. */
  inFlightByWorkspace: ReadonlyMap<string, number>;
}

/** One round of the worker's database work (see runRound). */
export interface Round {
  /** Fan out at most this many new events first; 0 when none can be waiting. */
  fanOut: number;
  /** Attempts that finished, to log. */
  finished: readonly FinishedAttempt[];
  /**
   * What to claim, if anything: asked for when the claim runs, after the fan-out and the log, so
   * that it counts the calls that finished meanwhile.
   */
  claim: (() => Claim) | null;
  /**
   * Whether the claim may take the workspaces a recent claim found again instead of looking
   * (fair-claim.ts claimWorkspaces): the worker's busy rounds, never one that fans out.
   */
  reuseWorkspaces?: boolean;
}

export interface RoundDone {
  fannedOut: FanOut;
  /** What was claimed, for the worker to attempt now. */
  due: DueDelivery[];
  /** True when a claim ran and took everything that was due: nothing is left waiting for room. */
  claimedAll: boolean;
}

const NOTHING_FANNED_OUT: FanOut = { events: 0, deliveries: 0, more: false };

/**
 * One round of the worker's database work, in one transaction and so with one commit: turns new
 * events into deliveries (fanOut), logs the attempts that finished (writeAttempts), then claims
 * what is due (claimDue), the new deliveries included.
 */
export async function runRound(deps: Deps, round: Round): Promise<RoundDone> {
  const { finished } = round;
  if (round.fanOut <= 0 && finished.length === 0 && !round.claim) return { fannedOut: NOTHING_FANNED_OUT, due: [], claimedAll: false };
  const now = deps.clock.now();
  // The fan-out's and the claim's ordered reads come from their indexes (fair-fan-out.ts).
  const done = await transactionPreferringIndexOrder(deps.db, deps.dialect, async (trx): Promise<RoundDone> => {
    const fannedOut = round.fanOut > 0 ? await fanOut(trx, deps.dialect, deps.db, now, round.fanOut) : NOTHING_FANNED_OUT;
    if (finished.length > 0) await writeAttempts(trx, finished);
    const claim = round.claim?.();
    if (!claim || claim.limit <= 0) return { fannedOut, due: [], claimedAll: false };
    const { due, all } = await claimDue(trx, deps.dialect, deps.db, now, claim, round.fanOut === 0 && round.reuseWorkspaces === true);
    return { fannedOut, due, claimedAll: all };
  });
  if (done.fannedOut.events > 0) {
    notifyEventsSequenced();
    refreshStatisticsAfterGrowth(deps, done.fannedOut.events);
  }
  return done;
}

/** Events sequenced between two refreshes of the events table's planner statistics. */
const EVENTS_BETWEEN_STATISTICS = 50_000;

declare module '../../services.js' {
  interface Services {
    /** Events this app's worker sequenced since it last refreshed the events table's statistics. */
    sequencedSinceStatistics: { count: number };
  }
}

/**
 * After every EVENTS_BETWEEN_STATISTICS events this process sequenced, refreshes the planner's
 * statistics of the events table where the engine needs it (Dialect.refreshStatistics): an import
 * of a million records must not leave the feed's reads planned as if the table were empty. In the
 * background, after the commit: a failure costs only the refresh.
 */
function refreshStatisticsAfterGrowth(deps: Deps, sequenced: number): void {
  const refresh = deps.dialect.refreshStatistics;
  if (!refresh) return;
  const counter = deps.services.sequencedSinceStatistics;
  counter.count += sequenced;
  if (counter.count < EVENTS_BETWEEN_STATISTICS) return;
  counter.count = 0;
  refresh('events').execute(deps.db).catch(() => undefined);
}

/** Logs attempts and moves their deliveries on, in one transaction (see writeAttempts). */
export async function recordAttempts(deps: Deps, finished: readonly FinishedAttempt[]): Promise<void> {
  await runRound(deps, { fanOut: 0, finished, claim: null });
}

/** Claims what is due, in one transaction (see claimDue). */
export async function claimDueDeliveries(deps: Deps, claim: Claim): Promise<DueDelivery[]> {
  return (await runRound(deps, { fanOut: 0, finished: [], claim: () => claim })).due;
}

/**
 * Claims deliveries that are due, for `leaseMs`: until then no other worker attempts them. A
 * worker that dies mid-attempt loses its lease, and the delivery is attempted again (at least
 * once). The worker's capacity is shared (shareFairly): no webhook gets more than `perWebhook`
 * calls in flight and no workspace more than `perWorkspace`, counting the worker's own calls in
 * flight, so receivers that hang hold only their own share; what is due beyond that stays
 * unclaimed, for the next round or another worker. The webhook's URL and secret are read here,
 * as they are now: a change applies from the next attempt. Due deliveries are read per
 * workspace (fair-claim.ts), so one workspace's backlog never stands before another's new
 * delivery. `all` tells whether everything due was claimed: no workspace filled its share, none
 * was left for the next claim, none left for room.
 */
async function claimDue(trx: Executor, dialect: Dialect, key: object, now: Date, claim: Claim, reuseWorkspaces: boolean): Promise<{ due: DueDelivery[]; all: boolean }> {
  const { limit, leaseMs, perWebhook, perWorkspace, inFlight, inFlightByWorkspace } = claim;
  const nowIso = now.toISOString();
  const fullWebhooks = [...inFlight].filter(([, count]) => count >= perWebhook).map(([id]) => id);
  const fullWorkspaces = new Set([...inFlightByWorkspace].filter(([, count]) => count >= perWorkspace).map(([id]) => id));
  // Per workspace (fair-claim.ts): a backlog in one fills only its own read.
  const { workspaces, more } = await claimWorkspaces(trx, dialect, key, fullWorkspaces, reuseWorkspaces);
  const dueOf = (workspaceId: string, share: number) => dueDeliveries(trx, dialect, workspaceId, nowIso, share, fullWebhooks);
  type DueRow = Awaited<ReturnType<ReturnType<typeof dueOf>['execute']>>[number];
  const rows: DueRow[] = [];
  let filled = false;
  for (const workspaceId of workspaces) {
    // A workspace can take no more than its room, nor more than the whole claim.
    const share = Math.min(limit, perWorkspace - (inFlightByWorkspace.get(workspaceId) ?? 0));
    if (share <= 0) continue;
    const taken = await dueOf(workspaceId, share).execute();
    if (taken.length >= share) filled = true;
    rows.push(...taken);
  }
  const chosen = shareFairly(rows, claim);
  // Webhooks and workspaces left out for having no room may have more waiting.
  const all = !filled && !more && chosen.length === rows.length && fullWebhooks.length === 0 && fullWorkspaces.size === 0;
  if (chosen.length === 0) return { due: [], all };
  await trx
    .updateTable('deliveries')
    .set({ locked_until: new Date(now.getTime() + leaseMs).toISOString() })
    .where('id', 'in', chosen.map((row) => row.id))
    .execute();
  const claimed = chosen.map((row) => ({
    id: row.id,
    workspaceId: row.workspace_id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    eventType: row.event_type,
    attemptCount: row.attempt_count,
    url: row.url,
    secret: row.secret,
    // A delivery has its event's id, type and workspace (fanOut).
    message: eventMessageText({
      id: row.event_id, type: row.event_type, created_at: row.created_at, workspace_id: row.workspace_id, collection_id: row.collection_id, data: row.data,
    }),
  }));
  return { due: claimed, all };
}

/**
 * Picks which due deliveries to start, round-robin: each turn gives one call to every workspace
 * that has work and room, the workspaces with the fewest calls in flight first, and within a
 * workspace to its webhook with the fewest calls in flight. No webhook goes past `perWebhook`
 * calls in flight, no workspace past `perWorkspace`, and no more than `limit` are picked. Within
 * one webhook, deliveries keep the order they were due in.
 */
export function shareFairly<T extends { workspace_id: string; webhook_id: string }>(rows: readonly T[], claim: Claim): T[] {
  const { limit, perWebhook, perWorkspace, inFlight, inFlightByWorkspace } = claim;
  const workspaces = new Map<string, { busy: number; webhooks: Map<string, { busy: number; queue: T[] }> }>();
  for (const row of rows) {
    let workspace = workspaces.get(row.workspace_id);
    if (!workspace) {
      workspace = { busy: inFlightByWorkspace.get(row.workspace_id) ?? 0, webhooks: new Map() };
      workspaces.set(row.workspace_id, workspace);
    }
    let webhook = workspace.webhooks.get(row.webhook_id);
    if (!webhook) {
      webhook = { busy: inFlight.get(row.webhook_id) ?? 0, queue: [] };
      workspace.webhooks.set(row.webhook_id, webhook);
    }
    webhook.queue.push(row);
  }
  const picked: T[] = [];
  for (;;) {
    const turn = [...workspaces.values()].sort((a, b) => a.busy - b.busy);
    let progress = false;
    for (const workspace of turn) {
      if (picked.length >= limit) return picked;
      if (workspace.busy >= perWorkspace) continue;
      let next: { busy: number; queue: T[] } | null = null;
      for (const webhook of workspace.webhooks.values()) {
        if (webhook.queue.length > 0 && webhook.busy < perWebhook && (!next || webhook.busy < next.busy)) next = webhook;
      }
      if (!next) continue;
      picked.push(next.queue.shift()!);
      next.busy += 1;
      workspace.busy += 1;
      progress = true;
    }
    if (!progress) return picked;
  }
}

/** An attempt that has been made, waiting to be logged. */
export interface FinishedAttempt {
  delivery: DueDelivery;
  result: AttemptResult;
  attemptedAt: Date;
}

/** What the log shows of an answer that could not be stored (see withoutResponse). */
export const RESPONSE_NOT_LOGGED = '[response not logged: it could not be stored]';

/**
 * The attempt with its status, duration and error but without the receiver's headers and body:
 * what is logged when the whole attempt cannot be. The delivery still moves on (succeeded,
 * retried or dead, as its status says) instead of being sent again and again because its log
 * fails.
 */
export function withoutResponse(attempt: FinishedAttempt): FinishedAttempt {
  return { ...attempt, result: { ...attempt.result, responseHeaders: {}, responseBody: RESPONSE_NOT_LOGGED } };
}

/**
 * The columns of the worker's bulk inserts, written by insertRows: every round inserts its
 * attempts and a round that fans out up to thousands of deliveries, and Kysely's builder would
 * make and compile a query node for each value.
 */
const DELIVERY_COLUMNS = [
  'id', 'workspace_id', 'webhook_id', 'event_id', 'event_type', 'state', 'attempt_count', 'next_attempt_at', 'locked_until', 'created_at', 'updated_at',
] as const satisfies readonly (keyof DeliveriesTable)[];
const ATTEMPT_COLUMNS = [
  'id', 'delivery_id', 'workspace_id', 'webhook_id', 'at', 'status', 'duration_ms', 'response_headers', 'response_body', 'error',
] as const satisfies readonly (keyof DeliveryAttemptsTable)[];

/**
 * Logs attempts and moves their deliveries on: each succeeded, retried on the schedule, or dead.
 * The worker gathers the attempts that finished within a few milliseconds and writes them
 * together (group commit). Per webhook, the results count in the order given: a success clears
 * the dead-in-a-row counter, and the 25th dead delivery in a row switches the webhook off and
 * writes `webhook.auto_disabled` to the audit log, in the same transaction. If the transaction
 * fails, nothing is logged and the deliveries' claims run out, so they are attempted again.
 */
async function writeAttempts(trx: Executor, finished: readonly FinishedAttempt[]): Promise<void> {
  // A record deleted for good while its delivery was on its way: the receiver's answer may echo it.
  const erased = await erasedAmong(trx, finished.filter(({ delivery }) => delivery.eventType.startsWith('record.')).map(({ delivery }) => delivery.eventId));
  const attempts: DeliveryAttemptsTable[] = [];
  // Successes need the same update but for their attempt count: one UPDATE per count (usually one).
  const succeeded = new Map<number, { ids: string[]; at: string }>();
  const failed: { id: string; state: 'pending' | 'dead'; attemptCount: number; retryAt: string | null; at: string }[] = [];
  // Per webhook, what counts for its dead-in-a-row counter, in order.
  const outcomes = new Map<string, { workspaceId: string; dead: boolean; at: Date }[]>();
  for (const { delivery, result, attemptedAt } of finished) {
    const at = attemptedAt.toISOString();
    const attemptCount = delivery.attemptCount + 1;
    attempts.push({
      id: newId('att', attemptedAt.getTime()),
      delivery_id: delivery.id,
      workspace_id: delivery.workspaceId,
      webhook_id: delivery.webhookId,
      at,
      status: result.status,
      duration_ms: result.durationMs,
      response_headers: JSON.stringify(result.responseHeaders),
      response_body: erased.has(delivery.eventId) ? '' : result.responseBody,
      error: result.error,
    });
    if (result.ok) {
      const group = succeeded.get(attemptCount) ?? { ids: [], at };
      group.ids.push(delivery.id);
      if (at > group.at) group.at = at;
      succeeded.set(attemptCount, group);
    } else {
      const retryAt = nextAttemptAt(attemptedAt, attemptCount);
      failed.push({ id: delivery.id, state: retryAt ? 'pending' : 'dead', attemptCount, retryAt: retryAt?.toISOString() ?? null, at });
      // A failure that will be retried neither counts as dead nor clears the counter.
      if (retryAt) continue;
    }
    const list = outcomes.get(delivery.webhookId) ?? [];
    list.push({ workspaceId: delivery.workspaceId, dead: !result.ok, at: attemptedAt });
    outcomes.set(delivery.webhookId, list);
  }

  await insertRows(trx, 'delivery_attempts', ATTEMPT_COLUMNS, attempts);
  for (const [attemptCount, { ids, at }] of succeeded) {
    await trx
      .updateTable('deliveries')
      .set({ state: 'succeeded', attempt_count: attemptCount, next_attempt_at: null, locked_until: null, updated_at: at })
      .where('id', 'in', ids)
      .execute();
  }
  for (const { id, state, attemptCount, retryAt, at } of failed) {
    await trx
      .updateTable('deliveries')
      .set({ state, attempt_count: attemptCount, next_attempt_at: retryAt, locked_until: null, updated_at: at })
      .where('id', '=', id)
      .execute();
  }
  // Consecutive successes clear the counter once; a dead delivery after a success needs the
  // clearing first. Webhooks whose last outcome is a success are cleared together at the end.
  const clearAtEnd: string[] = [];
  for (const [webhookId, list] of outcomes) {
    let clear = false;
    for (const outcome of list) {
      if (!outcome.dead) {
        clear = true;
        continue;
      }
      if (clear) await clearDeadStreak(trx, [webhookId]);
      clear = false;
      await countDeadDelivery(trx, webhookId, outcome.workspaceId, outcome.at);
    }
    if (clear) clearAtEnd.push(webhookId);
  }
  if (clearAtEnd.length > 0) await clearDeadStreak(trx, clearAtEnd);
}

async function clearDeadStreak(trx: Executor, webhookIds: string[]): Promise<void> {
  await trx.updateTable('webhooks').set({ dead_streak: 0 }).where('id', 'in', webhookIds).where('dead_streak', '>', 0).execute();
}

/** One more dead delivery in a row; the 25th switches the webhook off, with its audit entry. */
async function countDeadDelivery(trx: Executor, webhookId: string, workspaceId: string, at: Date): Promise<void> {
  const webhook = await trx
    .updateTable('webhooks')
    .set((eb) => ({ dead_streak: eb('dead_streak', '+', 1) }))
    .where('id', '=', webhookId)
    .returning(['dead_streak', 'enabled'])
    .executeTakeFirst();
  if (!webhook || !webhook.enabled || webhook.dead_streak < DEAD_IN_A_ROW_LIMIT) return;
  await trx.updateTable('webhooks').set({ enabled: 0, disabled_reason: 'auto', updated_at: at.toISOString() }).where('id', '=', webhookId).execute();
  await recordAudit(trx, at, { ip: null, userAgent: null, requestId: null }, {
    workspaceId,
    actor: { type: 'system', id: null, name: 'delivery worker' },
    action: 'webhook.auto_disabled',
    target: { type: 'webhook', id: webhookId },
    details: { deadInARow: webhook.dead_streak },
  });
}

const logCutoff = (now: Date) => new Date(now.getTime() - LOG_RETENTION_MS).toISOString();

/**
 * The delivery log past its 30 days, for housekeeping to delete, in this order (an attempt before
 * its delivery, a delivery before its event): attempt logs, walked by their time; finished
 * deliveries last changed before the cutoff, walked by that time (deliveries_finished, migration
 * 0021); the deliveries a webhook that stayed off for longer than that has held, walked through
 * the webhooks that are off; and delivered events no delivery refers to any more, walked by the
 * time they were fanned out.
 */
export const OLD_DELIVERY_LOG: readonly ExpiringRows[] = [
  {
    name: 'deliveryAttempts',
    table: 'delivery_attempts',
    key: ['at', 'id'],
    until: logCutoff,
    expired: (now) => sql<SqlBool>`at < ${logCutoff(now)}`,
  },
  {
    name: 'finishedDeliveries',
    table: 'deliveries',
    key: ['updated_at', 'id'],
    until: logCutoff,
    among: sql<SqlBool>`state <> 'pending'`,
    expired: (now) => sql<SqlBool>`updated_at < ${logCutoff(now)}`,
  },
  {
    name: 'heldDeliveries',
    table: 'deliveries',
    key: ['webhook_id', 'id'],
    among: sql<SqlBool>`state = 'pending' and webhook_id in (select webhooks.id from webhooks where webhooks.enabled = 0)`,
    expired: (now) => sql<SqlBool>`created_at < ${logCutoff(now)}`,
  },
  {
    name: 'deliveredEvents',
    table: 'events',
    key: ['fanned_out_at', 'id'],
    until: logCutoff,
    expired: (now) => sql<SqlBool>`fanned_out_at < ${logCutoff(now)} and not exists (select 1 from deliveries where deliveries.event_id = events.id)`,
  },
];

