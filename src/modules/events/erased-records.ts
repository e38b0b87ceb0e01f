import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Executor } from '../../db/schema.js';
import { firstIdAt, idLength } from '../../ids.js';
import { EVENT_TYPES } from './event-types.js';

/**
 * Whose data a permanent delete erases (docs/security.md, "What is erased and when"): one record,
 * or every record of a collection. Each module that keeps a copy of record data erases its own
 * copy with this, in the transaction of the delete.
 */
export interface ErasedRecords {
  workspaceId: string;
  collectionId: string;
  /** The one record; null for every record of the collection. */
  recordId: string | null;
  /** When the record (or the collection) was made: nothing about it was written before. */
  since: Date;
}

/**
 * How far before `since` the search for copies starts. Ids sort by the clock of the process that
 * made them; another process's clock a little behind (or a clock stepped back) could give a later
 * event an id from before the record's. An hour covers any clock a server keeps in sync.
 */
const CLOCK_MARGIN_MS = 3600 * 1000;

/** The smallest id of this prefix that a copy of the erased records' data could have. */
export const firstIdOfErased = (prefix: 'evt' | 'dlv', erased: ErasedRecords): string =>
  firstIdAt(prefix, erased.since.getTime() - CLOCK_MARGIN_MS);

const RECORD_EVENT_TYPES = EVENT_TYPES.filter((type) => type.startsWith('record.'));

/**
 * Every record event's data begins with the record's id (`{"record":{"id":"rec_…",` written by
 * recordEventData and the import's writer from RECORD_EVENT, whose first field is the id), so a
 * record's events are found, and their id kept, by position: no JSON function, the same SQL on
 * both engines, and text that a record's own data cannot fake (a quote inside it is escaped).
 */
const DATA_OPENING = '{"record":{"id":"';
const RECORD_ID_LENGTH = idLength('rec');

const TOMBSTONE_CLOSING = '","erased":true}}';

/** The tombstone that replaces an erased record event's data: the record's id, and that it is gone. */
export const erasedEventData = (recordId: string): string => `${DATA_OPENING}${recordId}${TOMBSTONE_CLOSING}`;

/** Whether an event's data is a tombstone (erasedEventData); a record event's real data never is. */
export const isErasedEventData = (data: string): boolean =>
  data.length === DATA_OPENING.length + RECORD_ID_LENGTH + TOMBSTONE_CLOSING.length && data.startsWith(DATA_OPENING) && data.endsWith(TOMBSTONE_CLOSING);

/** The tombstone of an event's data, made from the record id in it, in SQL. */
const tombstoneSql = sql<string>`cast(${DATA_OPENING} as text) || substr(events.data, ${sql.lit(DATA_OPENING.length + 1)}, ${sql.lit(RECORD_ID_LENGTH)}) || cast(${TOMBSTONE_CLOSING} as text)`;

/**
 * Which of these events were erased. For a log written after the erasure (an attempt sent before
 * it, logged after it): what it keeps of the receiver's answer must not bring the data back.
 */
export async function erasedAmong(executor: Executor, eventIds: readonly string[]): Promise<Set<string>> {
  if (eventIds.length === 0) return new Set();
  const rows = await executor
    .selectFrom('events')
    .select('id')
    .where('id', 'in', [...new Set(eventIds)])
    .where(sql<SqlBool>`events.data = ${tombstoneSql}`)
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** The condition on `events` that picks the events carrying the erased records' data. */
export function isErasedRecordEvent(erased: ErasedRecords): RawBuilder<SqlBool> {
  const opening = erased.recordId === null ? `${DATA_OPENING}rec_` : `${DATA_OPENING}${erased.recordId}"`;
  return sql<SqlBool>`events.workspace_id = ${erased.workspaceId}
    and events.collection_id = ${erased.collectionId}
    and events.id >= ${firstIdOfErased('evt', erased)}
    and events.type in (${sql.join(RECORD_EVENT_TYPES)})
    and substr(events.data, 1, ${sql.lit(opening.length)}) = ${opening}`;
}

/**
 * Replaces the data of the erased records' events with a tombstone (erasedEventData), keeping
 * the events: they hold their places in the feed and the stream's sequence, their deliveries
 * still point at them, and a delivery not yet made sends the tombstone instead of the data, as
 * the body of every delivery is read from its event when it is attempted. Returns how many.
 */
export async function eraseRecordEvents(executor: Executor, erased: ErasedRecords): Promise<number> {
  const result = await sql`update events set data = ${tombstoneSql} where ${isErasedRecordEvent(erased)}`.execute(executor);
  return Number(result.numAffectedRows ?? 0);
}
