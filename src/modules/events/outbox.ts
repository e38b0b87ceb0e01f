import { dialectOf, type Dialect, type PreparedRows } from '../../db/dialect.js';
import { insertRows } from '../../db/insert-rows.js';
import type { EventsTable, Executor } from '../../db/schema.js';
import { newId } from '../../ids.js';
import type { EventType } from './event-types.js';
import { notifyEventsWritten } from './outbox-signal.js';

export { EVENT_TYPES, type EventType } from './event-types.js';

/** The body of a delivery, exactly as docs/design.md §7 gives it (written by eventMessageText, in this order). */
export interface EventMessage {
  id: string;
  type: EventType | 'webhook.ping';
  createdAt: string;
  workspaceId: string;
  collectionId: string;
  data: Record<string, unknown>;
}

export interface NewEvent {
  workspaceId: string;
  collectionId: string;
  type: EventType;
  data: Record<string, unknown>;
}

export const EVENT_COLUMNS = ['id', 'workspace_id', 'collection_id', 'type', 'data', 'created_at'] as const;
/** An import's events carry its id too (see EventBatch). */
const IMPORT_EVENT_COLUMNS = [...EVENT_COLUMNS, 'import_id'] as const;

/** Rows per statement of emitEvents. */
const ROWS_PER_INSERT = 500;

/** What of an outbox row makes its message. */
export type StoredEvent = Pick<EventsTable, 'id' | 'type' | 'created_at' | 'workspace_id' | 'collection_id' | 'data'>;

/**
 * An event's message (EventMessage) as the text that is delivered and signed: exactly what
 * JSON.stringify writes for it, put together around the data as stored. Ids, event types and ISO
 * times need no escaping in JSON.
 */
export const eventMessageText = (event: StoredEvent): string =>
  `{"id":"${event.id}","type":"${event.type}","createdAt":"${event.created_at}","workspaceId":"${event.workspace_id}","collectionId":"${event.collection_id}","data":${event.data}}`;

/**
 * Writes events into the outbox. Call with the transaction that makes the change: the change
 * and its events commit together or not at all, so no event is lost and none describes a change
 * that did not happen. Many events go in one statement.
 */
export async function emitEvents(executor: Executor, at: Date, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((event) => newEventRow(at, event));
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    await insertRows(executor, 'events', EVENT_COLUMNS, rows.slice(start, start + ROWS_PER_INSERT));
  }
  await announceEvents(executor);
}

/** An event's row in the outbox, for writers that insert it themselves (EVENT_COLUMNS). */
export const newEventRow = (at: Date, event: NewEvent): Pick<EventsTable, (typeof EVENT_COLUMNS)[number]> => ({
  id: newId('evt', at.getTime()),
  workspace_id: event.workspaceId,
  collection_id: event.collectionId,
  type: event.type,
  data: JSON.stringify(event.data),
  created_at: at.toISOString(),
});

export const emitEvent = (executor: Executor, at: Date, event: NewEvent) => emitEvents(executor, at, [event]);

/**
 * Wakes the webhook workers after events were written: those of other processes (at commit, on
 * PostgreSQL) and the one in this process. Once per transaction is enough, however many events.
 */
export async function announceEvents(executor: Executor): Promise<void> {
  await dialectOf(executor).notifyEvents?.execute(executor);
  notifyEventsWritten();
}

/**
 * Events of one type in one collection whose data is JSON text already, for writes in bulk (an
 * import's record.created events, whose data holds the record's data as it was just serialised
 * for the record itself): the same data is not serialised a second time. Collect with add, take
 * them as rows to write with prepareRows, write those in the transaction of the change, then
 * announceEvents.
 */
export class EventBatch {
  private values: unknown[] = [];
  private readonly time: number;
  private readonly createdAt: string;

  /**
   * `importId`: the import's event_imports row (startImportEvents), written in the same
   * transaction; the fan-out reaches these events through it once the import has committed.
   */
  constructor(at: Date, private readonly workspaceId: string, private readonly collectionId: string, private readonly type: EventType, private readonly importId: string) {
    this.time = at.getTime();
    this.createdAt = at.toISOString();
  }

  /** `dataJson`: the event's data (an object) as JSON text, e.g. JSON.stringify({record: …}). */
  add(dataJson: string): void {
    this.values.push(newId('evt', this.time), this.workspaceId, this.collectionId, this.type, dataJson, this.createdAt, this.importId);
  }

  /** The events added so far as rows ready to write (Dialect.prepareRows); the batch is empty again. */
  prepareRows(dialect: Dialect): PreparedRows {
    const values = this.values;
    this.values = [];
    return dialect.prepareRows('events', IMPORT_EVENT_COLUMNS, values);
  }
}

/**
 * Opens an import's lane in the outbox: its events are written with the id returned, and the
 * row written here becomes visible with them at the import's commit (or goes with them at its
 * rollback). Until then the worker's scans never meet the import's events (migration 0014).
 */
export async function startImportEvents(executor: Executor, at: Date, workspaceId: string): Promise<string> {
  const id = newId('imp', at.getTime());
  await executor.insertInto('event_imports').values({ id, workspace_id: workspaceId, created_at: at.toISOString() }).execute();
  return id;
}
