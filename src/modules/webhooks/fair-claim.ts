import { sql } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Executor } from '../../db/schema.js';
import { WorkspaceRotation, workspacesIn } from './workspace-rotation.js';

/**
 * Where the claim of due deliveries looks, fairly between workspaces (migration 0014): one
 * workspace's million pending deliveries fill the front of "every due delivery by time", so a
 * single ordered read would hand a small workspace's new delivery out only once the backlog ahead
 * of it had gone. Instead the claim finds the workspaces with pending deliveries (one probe of
 * deliveries_pending each) and reads each one's oldest due few; shareFairly then picks among them.
 */

/** Workspaces looked at per claim at most; the next claim goes on after the last one looked at. */
export const MAX_WORKSPACES_PER_CLAIM = 64;

/** The workspaces with pending deliveries (due or not), in id order after `after`, at most `max`. */
export function workspacesPending(dialect: Dialect, after: string, max: number) {
  return workspacesIn(sql`deliveries ${dialect.indexedBy('deliveries_pending')}`, sql`state = 'pending'`, after, max);
}

/** The claim's turns over the workspaces with pending deliveries. */
const rotation = new WorkspaceRotation(workspacesPending, MAX_WORKSPACES_PER_CLAIM);

/**
 * The workspaces to read due deliveries of in this claim, leaving out `full` ones (no room for
 * another call), from where the last claim stopped and round the circle. With `reuse`, the last
 * claim's list serves again if it is recent (WorkspaceRotation): the worker asks for a new scan in
 * every round that fans events out, so a workspace whose events became deliveries is seen at once.
 * Deliveries made pending without an event (a retry, a redelivery, a webhook switched back on)
 * wake this process's worker as events do, and so are seen at once too; made by another process,
 * within REUSE_MS.
 */
export async function claimWorkspaces(trx: Executor, dialect: Dialect, key: object, full: ReadonlySet<string>, reuse: boolean): Promise<{ workspaces: string[]; more: boolean }> {
  const { workspaces, more } = await rotation.next(trx, dialect, key, reuse);
  return { workspaces: workspaces.filter((id) => !full.has(id)), more };
}

/**
 * One workspace's oldest due deliveries, at most `share`, with what an attempt needs (the
 * webhook's URL and secret as they are now, the event's message), locked for this transaction
 * (on PostgreSQL, another worker's locked ones are skipped). Read in time order from
 * deliveries_pending: test/pending-events-plan.test.ts checks the plan.
 */
export function dueDeliveries(trx: Executor, dialect: Dialect, workspaceId: string, nowIso: string, share: number, fullWebhooks: readonly string[]) {
  let due = trx
    .selectFrom('deliveries')
    .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
    .innerJoin('events', 'events.id', 'deliveries.event_id')
    .select([
      'deliveries.id', 'deliveries.workspace_id', 'deliveries.webhook_id', 'deliveries.event_id', 'deliveries.event_type',
      'deliveries.attempt_count', 'webhooks.url', 'webhooks.secret', 'events.created_at', 'events.collection_id', 'events.data',
    ])
    .where('deliveries.workspace_id', '=', workspaceId)
    .where('deliveries.state', '=', 'pending')
    .where('deliveries.next_attempt_at', '<=', nowIso)
    .where((eb) => eb.or([eb('deliveries.locked_until', 'is', null), eb('deliveries.locked_until', '<=', nowIso)]))
    .where('webhooks.enabled', '=', 1)
    .orderBy('deliveries.next_attempt_at')
    // Bound, unlike rowLimit: the room left differs from round to round, and a statement of its
    // own per value would crowd the statement cache; a round can afford SQLite's re-prepare.
    .limit(share);
  if (fullWebhooks.length) due = due.where('deliveries.webhook_id', 'not in', fullWebhooks);
  return dialect.supportsSkipLocked ? due.forUpdate(['deliveries']).skipLocked() : due;
}
