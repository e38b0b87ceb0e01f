import type { Deps } from '../../deps.js';
import { rowLimit } from '../../db/row-limit.js';
import { visitRows } from '../../db/row-stream.js';
import type { Executor } from '../../db/schema.js';
import { PageBudget } from '../../page-budget.js';
import { EVENT_TYPES, type EventType } from './event-types.js';
import { eventMessageText } from './outbox.js';

/** Events stay readable in the feed for 30 days, as long as delivery logs are kept. */
export const EVENT_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** What of the feed one caller may see, and asked to see. */
export interface EventFilter {
  /** The event types to show: those asked for that the caller may read. */
  types: ReadonlySet<EventType>;
  /** The collection ids to show, or null for every collection. */
  collections: ReadonlySet<string> | null;
}

/** One event of the feed: its place in the sequence, and its message as delivered. */
export interface FeedEvent {
  seq: number;
  id: string;
  workspaceId: string;
  collectionId: string;
  type: EventType;
  /** The event message, byte for byte the body a webhook delivery of it carries. */
  text: string;
}

export interface FeedPage {
  /** Newest first, before this place; or oldest first, after it. */
  direction: 'newest-first' | 'oldest-first';
  /** Exclusive bound in the sequence; undefined from the newest (or the oldest kept). */
  from?: number;
  limit: number;
}

const COLUMNS = ['seq', 'id', 'type', 'created_at', 'workspace_id', 'collection_id', 'data'] as const;

/**
 * Up to `limit` of a workspace's events in the order they were sequenced (migration 0010), kept
 * for 30 days. Events are in the feed once the worker has fanned them out, milliseconds after
 * their change committed.
 */
export async function listEvents(deps: Deps, workspaceId: string, filter: EventFilter, page: FeedPage): Promise<FeedEvent[]> {
  const query = feedQuery(deps, workspaceId, filter, page);
  if (!query) return [];
  return (await query.execute()).map(toFeedEvent);
}

/**
 * A page of the feed for the list route: up to `limit` events, ending early where the next
 * would take the answer past PLAINBASE_PAGE_BYTES (at least one event per page). An event
 * carries its record's data, so events can be as large as records: rows are read a batch at a
 * time and reading stops at the first event that does not fit, and `more` says one is left.
 */
export async function readFeedPage(deps: Deps, workspaceId: string, filter: EventFilter, page: FeedPage): Promise<{ events: FeedEvent[]; more: boolean }> {
  const query = feedQuery(deps, workspaceId, filter, { ...page, limit: page.limit + 1 });
  if (!query) return { events: [], more: false };
  const budget = new PageBudget(deps.config.pageBytes);
  const events: FeedEvent[] = [];
  let more = false;
  // As many rows at once as fit in a few budgets at the largest an event can be (about a record's).
  const batchRows = Math.max(1, Math.floor((READ_AHEAD_PAGES * deps.config.pageBytes) / deps.config.bodyLimitBytes));
  await visitRows<FeedRow>(deps.db, query.compile(), { batchRows, maxRows: page.limit + 1 }, (row) => {
    const event = events.length < page.limit ? toFeedEvent(row) : null;
    if (!event || !budget.admits(Buffer.byteLength(event.text))) {
      more = true;
      return false;
    }
    events.push(event);
    return true;
  });
  return { events, more };
}

/** How many page budgets of events a read may hold before it has looked at them. */
const READ_AHEAD_PAGES = 4;

function feedQuery(deps: Deps, workspaceId: string, filter: EventFilter, page: FeedPage) {
  if (filter.types.size === 0 || filter.collections?.size === 0) return null;
  const cutoff = new Date(deps.clock.now().getTime() - EVENT_RETENTION_MS).toISOString();
  const newestFirst = page.direction === 'newest-first';
  let query = deps.db
    .selectFrom('events')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('seq', 'is not', null)
    .where('created_at', '>=', cutoff);
  if (page.from !== undefined) query = query.where('seq', newestFirst ? '<' : '>', page.from);
  if (filter.types.size < EVENT_TYPES.length) query = query.where('type', 'in', [...filter.types]);
  if (filter.collections) query = query.where('collection_id', 'in', [...filter.collections]);
  return query.orderBy('seq', newestFirst ? 'desc' : 'asc').limit(rowLimit(page.limit));
}

/** Every event sequenced after `after`, of all workspaces, oldest first: what the stream hub reads. */
export async function readSequencedAfter(executor: Executor, after: number, limit: number): Promise<FeedEvent[]> {
  const rows = await executor.selectFrom('events').select(COLUMNS).where('seq', '>', after).orderBy('seq').limit(rowLimit(limit)).execute();
  return rows.map(toFeedEvent);
}

/** The last place taken in the sequence (0 before any event). */
export async function lastSequenced(executor: Executor): Promise<number> {
  const { last } = await executor
    .selectFrom('events')
    .select((eb) => eb.fn.max('seq').as('last'))
    .where('seq', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(last ?? 0);
}

/** An event's place in the sequence, if it is one of the workspace's events still kept and sequenced. */
export async function placeOfEvent(deps: Deps, workspaceId: string, eventId: string): Promise<number | null> {
  const row = await deps.db
    .selectFrom('events')
    .select('seq')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', eventId)
    .executeTakeFirst();
  return row?.seq ?? null;
}

type FeedRow = { seq: number | null; id: string; type: string; created_at: string; workspace_id: string; collection_id: string; data: string };

export function toFeedEvent(row: FeedRow): FeedEvent {
  return {
    seq: Number(row.seq),
    id: row.id,
    workspaceId: row.workspace_id,
    collectionId: row.collection_id,
    type: row.type as EventType,
    text: eventMessageText(row),
  };
}
