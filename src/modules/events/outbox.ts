import { dialectFor, engineOf } from '../../db/dialect.js';
import type { Executor } from '../../db/schema.js';
import { newId } from '../../ids.js';
import { notifyEventsWritten } from './outbox-signal.js';

export const EVENT_TYPES = [
  'record.created',
  'record.updated',
  'record.deleted',
  'record.restored',
  'collection.created',
  'collection.updated',
  'collection.deleted',
  'collection.restored',
  'schema.updated',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

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
    await executor.insertInto('events').values(rows.slice(start, start + 500)).execute();
  }
  // Wakes workers in other processes (at commit, on PostgreSQL) and the one in this process.
  await dialectFor(engineOf(executor)).notifyEvents?.execute(executor);
  notifyEventsWritten();
}

export const emitEvent = (executor: Executor, at: Date, event: NewEvent) => emitEvents(executor, at, [event]);
