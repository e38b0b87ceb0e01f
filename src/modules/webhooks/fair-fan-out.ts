import { sql } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Executor } from '../../db/schema.js';
import { WorkspaceRotation, workspacesIn } from './workspace-rotation.js';

/**
 * Where a round of the fan-out finds waiting events, fairly between workspaces (migration 0014).
 * A lane is one workspace's ordinary events, or one committed import's events. Each round serves
 * every lane with waiting events a share of the round's budget (at least MIN_SHARE), so a
 * workspace with a million-event backlog takes one share per round and another workspace's new
 * event is fanned out in the next round, whatever the backlog. With one lane alone it takes the
 * whole budget: the importer's own drain is not slowed when nobody else is waiting.
 */
export type Lane = { workspaceId: string; importId: string | null };

/** Events a lane gets per round at the least, however many lanes wait. */
export const MIN_SHARE = 64;
/** Workspaces served in one round at most; the next round goes on after the last one served. */
export const MAX_WORKSPACES_PER_ROUND = 64;

/** An event as the fan-out reads it. */
export interface WaitingEvent {
  id: string;
  workspace_id: string;
  collection_id: string;
  type: string;
  created_at: string;
}

/**
 * The workspaces with ordinary events waiting, in id order after `after`, at most `max` (one
 * index probe each on events_waiting, never the events themselves).
 */
export function workspacesWaiting(dialect: Dialect, after: string, max: number) {
  return workspacesIn(sql`events ${dialect.indexedBy('events_waiting')}`, sql`fanned_out_at is null and import_id is null`, after, max);
}

/** The worker's turns over the workspaces with ordinary events waiting. */
const rotation = new WorkspaceRotation(workspacesWaiting, MAX_WORKSPACES_PER_ROUND);

/** The lanes with events waiting now, ordinary ones first from where the last round stopped; `more` when workspaces were left for the next round. */
export async function waitingLanes(trx: Executor, dialect: Dialect, key: object): Promise<{ lanes: Lane[]; more: boolean }> {
  const { workspaces, more } = await rotation.next(trx, dialect, key);
  const lanes: Lane[] = workspaces.map((workspaceId) => ({ workspaceId, importId: null }));
  // Committed imports (an import's row is visible only from its commit), the oldest of each
  // workspace: a workspace that imports many at once still takes one share per round.
  const imports = await trx.selectFrom('event_imports').select(['id', 'workspace_id']).orderBy('id').execute();
  const importing = new Set<string>();
  for (const row of imports) {
    if (importing.has(row.workspace_id)) continue;
    importing.add(row.workspace_id);
    lanes.push({ workspaceId: row.workspace_id, importId: row.id });
  }
  return { lanes, more };
}

/** A round's share for each of `lanes` lanes out of `budget` events. */
export const shareOf = (budget: number, lanes: number): number => Math.max(MIN_SHARE, Math.ceil(budget / Math.max(1, lanes)));

/**
 * The oldest waiting events of one lane, at most `share`, locked for this transaction (on
 * PostgreSQL, another worker's locked ones are skipped). Read in id order from events_waiting or
 * events_imported: test/pending-events-plan.test.ts checks the plans.
 */
export function laneEvents(trx: Executor, dialect: Dialect, lane: Lane, share: number) {
  let query = trx
    .selectFrom('events')
    .select(['id', 'workspace_id', 'collection_id', 'type', 'created_at'])
    .where('fanned_out_at', 'is', null);
  query = lane.importId === null
    ? query.where('import_id', 'is', null).where('workspace_id', '=', lane.workspaceId)
    : query.where('import_id', 'is not', null).where('import_id', '=', lane.importId);
  query = query.orderBy('id').limit(share);
  return dialect.supportsSkipLocked ? query.forUpdate().skipLocked() : query;
}

/**
 * Closes an import's lane once none of its events waits (locked ones by another worker still
 * count as waiting: that worker has not committed).
 */
export async function closeImportIfDone(trx: Executor, importId: string): Promise<boolean> {
  const left = await trx.selectFrom('events').select('id').where('fanned_out_at', 'is', null).where('import_id', 'is not', null).where('import_id', '=', importId).limit(1).executeTakeFirst();
  if (left) return false;
  await trx.deleteFrom('event_imports').where('id', '=', importId).execute();
  return true;
}

/**
 * The events of one round, fairly: every waiting lane's share (in a transaction where
 * Dialect.preferIndexOrder holds: db/index-order-transaction.ts). `more` when some lane may have
 * more waiting (it filled its share, or workspaces were left for the next round).
 */
export async function takeWaitingEvents(trx: Executor, dialect: Dialect, key: object, budget: number): Promise<{ events: WaitingEvent[]; more: boolean }> {
  const waiting = await waitingLanes(trx, dialect, key);
  const { lanes } = waiting;
  if (lanes.length === 0) return { events: [], more: false };
  const share = shareOf(budget, lanes.length);
  const events: WaitingEvent[] = [];
  let more = waiting.more;
  for (const lane of lanes) {
    const taken = await laneEvents(trx, dialect, lane, share).execute();
    events.push(...taken);
    if (taken.length >= share) more = true;
    else if (lane.importId !== null && taken.length === 0 && !(await closeImportIfDone(trx, lane.importId))) more = true;
  }
  return { events, more };
}
