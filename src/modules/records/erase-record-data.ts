import type { Executor } from '../../db/schema.js';
import { eraseRecordEvents, type ErasedRecords } from '../events/erased-records.js';
import { notifyRecordsErased } from '../events/outbox-signal.js';
import { eraseVersions } from '../history/record-versions.js';
import { eraseStoredAnswers } from '../idempotency/idempotency.js';
import { eraseDeliveryAnswers } from '../webhooks/erase-delivery-log.js';

export type { ErasedRecords };

/** How many copies of record data an erasure replaced, per place. */
export interface Erased {
  events: number;
  deliveryAnswers: number;
  storedAnswers: number;
}

/**
 * Erases every copy of the records' data kept outside the records table (docs/security.md,
 * "What is erased and when"): the data of their events (feed, stream, webhook bodies), the
 * receivers' answers in the delivery log, the stored answers of idempotent creates, and the
 * records' history (history/record-versions.ts). Call it
 * in the transaction that deletes the records, so the data goes everywhere at once or nowhere;
 * then, after the commit, announceErasure.
 */
export async function eraseRecordData(executor: Executor, erased: ErasedRecords): Promise<Erased> {
  // The events first: an attempt logged from now on sees their tombstones (writeAttempts).
  const events = await eraseRecordEvents(executor, erased);
  const deliveryAnswers = await eraseDeliveryAnswers(executor, erased);
  const storedAnswers = await eraseStoredAnswers(executor, erased);
  await eraseVersions(executor, erased);
  return { events, deliveryAnswers, storedAnswers };
}

/** Tells what keeps events in memory (the event stream's hub) to forget the erased records' data. */
export const announceErasure = (erased: ErasedRecords): void => notifyRecordsErased(erased);
