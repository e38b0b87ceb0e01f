import { dialectFor, engineOf } from '../../db/dialect.js';
import { insertRows } from '../../db/insert-rows.js';
import type { Executor } from '../../db/schema.js';
import { newId } from '../../ids.js';
import type { EventType } from './event-types.js';
import { notifyEventsWritten } from './outbox-signal.js';

export { EVENT_TYPES, type EventType } from './event-types.js';

/** The body of a delivery, exactly as SPEC.md §2.4 gives it. */
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

const EVENT_COLUMNS = ['id', 'workspace_id', 'collection_id', 'type', 'message', 'created_at'] as const;

/**
 * Writes events into the outbox. Call with the transaction that makes the change: the change
 * and its events commit together or not at all, so no event is lost and none describes a change
 * that did not happen. Many events go in one statement (imports).
 */
export async function emitEvents(executor: Executor, at: Date, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const createdAt = at.toISOString();
  const rows = events.map((event) => {
    const message: EventMessage = {
      id: newId('evt', at.getTime()),
      type: event.type,
      createdAt,
      workspaceId: event.workspaceId,
      collectionId: event.collectionId,
      data: event.data,
    };
    return {
      id: message.id,
      workspace_id: event.workspaceId,
      collection_id: event.collectionId,
      type: event.type,
      message: JSON.stringify(message),
      created_at: createdAt,
    };
  });
  // Bounded statements: SQLite allows at most 32766 bound parameters per statement.
  for (let start = 0; start < rows.length; start += 500) {
    await insertRows(executor, 'events', EVENT_COLUMNS, rows.slice(start, start + 500));
  }
  // Wakes workers in other processes (at commit, on PostgreSQL) and the one in this process.
  await dialectFor(engineOf(executor)).notifyEvents?.execute(executor);
  notifyEventsWritten();
}

export const emitEvent = (executor: Executor, at: Date, event: NewEvent) => emitEvents(executor, at, [event]);
