import { EventEmitter } from 'node:events';
import type { ErasedRecords } from './erased-records.js';

/**
 * Wakes the delivery worker of this process as soon as events are written, so a new event is
 * attempted within milliseconds rather than at the next poll. Other processes on PostgreSQL are
 * woken by NOTIFY (see the worker). Waking early is harmless: the worker's read waits for the
 * writing transaction (one connection on SQLite) or simply finds nothing new yet.
 */
const signal = new EventEmitter();
signal.setMaxListeners(0);

export function notifyEventsWritten(): void {
  signal.emit('events');
}

export function onEventsWritten(listener: () => void): () => void {
  signal.on('events', listener);
  return () => signal.off('events', listener);
}

/**
 * Tells this process's event streams that events took their places in the sequence (the worker
 * fanned them out), after the transaction that did it committed. Streams in other processes hear
 * it through PostgreSQL's NOTIFY.
 */
export function notifyEventsSequenced(): void {
  signal.emit('sequenced');
}

export function onEventsSequenced(listener: () => void): () => void {
  signal.on('sequenced', listener);
  return () => signal.off('sequenced', listener);
}

/**
 * Tells this process that records were deleted for good, after the commit: whatever keeps events
 * in memory must drop (or replace with erasedEventData) the data of the record events that
 * isErasedRecordEvent picks (events/erased-records.ts). Other processes are not told.
 */
export function notifyRecordsErased(erased: ErasedRecords): void {
  signal.emit('erased', erased);
}

export function onRecordsErased(listener: (erased: ErasedRecords) => void): () => void {
  signal.on('erased', listener);
  return () => signal.off('erased', listener);
}
