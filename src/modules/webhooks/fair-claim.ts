import { sql, type Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/schema.js';

/**
 * Where the claim of due deliveries looks, fairly between workspaces (migration 0014): one
 * workspace's million pending deliveries fill the front of "every due delivery by time", so a
 * single ordered read would hand a small workspace's new delivery out only once the backlog ahead
 * of it had gone. Instead the claim finds the workspaces with pending deliveries (one probe of
 * deliveries_pending each) and reads each one's oldest due few; shareFairly then picks among them.
 */

/** Workspaces looked at per claim at most; the next claim goes on after the last one looked at. */
export const MAX_WORKSPACES_PER_CLAIM = 64;

const lastLooked = new WeakMap<object, string>();

/** The workspaces with pending deliveries (due or not), in id order after `after`, at most `max`. */
export function workspacesPending(dialect: Dialect, after: string, max: number) {
  const deliveries = sql`deliveries ${dialect.indexedBy('deliveries_pending')}`;
  return sql<{ workspace_id: string }>`with recursive pending(workspace_id) as (
      select (select min(workspace_id) from ${deliveries} where state = 'pending' and workspace_id > ${after})
      union all
      select (select min(workspace_id) from ${deliveries} where state = 'pending' and workspace_id > pending.workspace_id)
        from pending where pending.workspace_id is not null
    )
    select workspace_id from pending where workspace_id is not null limit ${max}`;
}

/**
 * The workspaces to read due deliveries of in this claim, leaving out `full` ones (no room for
 * another call), from where the last claim stopped and round the circle.
 */
export async function claimWorkspaces(trx: Transaction<Database>, dialect: Dialect, key: object, full: ReadonlySet<string>): Promise<{ workspaces: string[]; more: boolean }> {
  const after = lastLooked.get(key) ?? '';
  let { rows } = await workspacesPending(dialect, after, MAX_WORKSPACES_PER_CLAIM).execute(trx);
  if (rows.length < MAX_WORKSPACES_PER_CLAIM && after !== '') {
    const { rows: wrapped } = await workspacesPending(dialect, '', MAX_WORKSPACES_PER_CLAIM - rows.length).execute(trx);
    const seen = new Set(rows.map((row) => row.workspace_id));
    rows = [...rows, ...wrapped.filter((row) => !seen.has(row.workspace_id))];
  }
  const more = rows.length >= MAX_WORKSPACES_PER_CLAIM;
  if (more) lastLooked.set(key, rows[rows.length - 1]!.workspace_id);
  else lastLooked.delete(key);
  return { workspaces: rows.map((row) => row.workspace_id).filter((id) => !full.has(id)), more };
}

/**
 * One workspace's oldest due deliveries, at most `share`, with what an attempt needs (the
 * webhook's URL and secret as they are now, the event's message), locked for this transaction
 * (on PostgreSQL, another worker's locked ones are skipped). Read in time order from
 * deliveries_pending: test/pending-events-plan.test.ts checks the plan.
 */
export function dueDeliveries(trx: Transaction<Database>, dialect: Dialect, workspaceId: string, nowIso: string, share: number, fullWebhooks: readonly string[]) {
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
