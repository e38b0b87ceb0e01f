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
