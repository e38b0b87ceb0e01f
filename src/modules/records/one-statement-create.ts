import { directQuery } from '../../db/direct-query.js';
import type { Dialect } from '../../db/dialect.js';
import type { AuditLogTable, CollectionsTable, Db, EventsTable, RecordsTable } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { LruMap } from '../../lru-map.js';
import { AUDIT_COLUMNS } from '../audit/audit.js';
import { EVENT_COLUMNS } from '../events/outbox.js';
import { notifyEventsWritten } from '../events/outbox-signal.js';
import { recordChecker } from '../schemas/schema-versions.js';
import { RECORD_COLUMNS, type RecordData } from './record-shape.js';

/**
 * A create as one statement, where one statement can write several tables
 * (Dialect.insertsTogether: PostgreSQL). The transactional create is seven round trips (BEGIN,
 * the collection, the record, its event, NOTIFY, the audit entry, COMMIT); this is one: the record,
 * its record.created event and, when made with a key, its audit entry are inserted by a single
 * statement, which is a transaction of its own, so they are kept together or not at all.
 *
 * The data must be checked before the statement, against the collection's active schema
 * version, so the collection has to be known first: it is the one this process last saw under
 * the same name (rememberCollection, called by the transactional create), and the statement
 * writes only if the collection still is that one (same id and name, not in the trash, same
 * active schema version). Otherwise it writes nothing and the caller creates the record the
 * transactional way, which looks the collection up again and answers what is true now (404,
 * in the trash, a schema error). A remembered collection is a guess that saves a round trip and
 * never an answer, so nothing has to forget it when a collection changes, in this process or another.
 */

/** The rows a create writes: the record, its event, and the audit entry of a key's write (or null). */
export interface CreateRows {
  record: RecordsTable;
  event: Pick<EventsTable, (typeof EVENT_COLUMNS)[number]>;
  audit: AuditLogTable | null;
}

const REMEMBERED = 1000;
/** Per database (a process may serve several in tests): workspace and collection reference → collection. */
const remembered = new WeakMap<Db, LruMap<string, CollectionsTable>>();

const rememberedKey = (workspaceId: string, idOrName: string) => `${workspaceId}\n${idOrName}`;

/** Remembers the collection a create found, for the next create under the same reference. */
export function rememberCollection(deps: Pick<Deps, 'db' | 'dialect'>, workspaceId: string, idOrName: string, collection: CollectionsTable): void {
  if (!deps.dialect.insertsTogether) return;
  let collections = remembered.get(deps.db);
  if (!collections) {
    collections = new LruMap(REMEMBERED);
    remembered.set(deps.db, collections);
  }
  collections.set(rememberedKey(workspaceId, idOrName), collection);
}

/** The collection is still the one remembered: parameters 1–4 of both statements. */
const GUARD = (parameter: (position: number) => string) => `select 1 from collections
  where workspace_id = ${parameter(1)} and id = ${parameter(2)} and name = ${parameter(3)} and trashed_at is null
  and coalesce(active_schema_version, 0) = ${parameter(4)}`;

const statement = (name: string, tables: { table: string; columns: readonly string[] }[]) =>
  directQuery<{ written: unknown }>(name, (parameter, dialect: Dialect) => {
    if (!dialect.insertsTogether) throw new Error(`${name} needs Dialect.insertsTogether`);
    return dialect.insertsTogether(GUARD(parameter), 4, tables, parameter);
  });

const RECORD_AND_EVENT = [{ table: 'records', columns: RECORD_COLUMNS }, { table: 'events', columns: EVENT_COLUMNS }];
const createRecordAndEvent = statement('plainbase_create_record', RECORD_AND_EVENT);
const createRecordEventAndAudit = statement('plainbase_create_record_audited', [...RECORD_AND_EVENT, { table: 'audit_log', columns: AUDIT_COLUMNS }]);

/**
 * Creates the record in one statement if this process remembers the collection, the data passes
 * its schema version and the collection is still as remembered: answers the rows written, or
 * null when the caller must create the record the transactional way (nothing was written).
 */
export async function createInOneStatement<Rows extends CreateRows>(
  deps: Pick<Deps, 'db' | 'dialect'>,
  workspaceId: string,
  idOrName: string,
  data: RecordData,
  rowsFor: (collection: CollectionsTable, schemaVersion: number | null) => Rows,
): Promise<Rows | null> {
  const collection = remembered.get(deps.db)?.get(rememberedKey(workspaceId, idOrName));
  if (!collection) return null;
  let schemaVersion: number | null;
  try {
    schemaVersion = (await recordChecker(deps.db, collection))(data);
  } catch (error) {
    // Refused under the remembered version, which may no longer be the active one: the
    // transactional create decides, against the collection as it is now.
    if (error instanceof AppError) return null;
    throw error;
  }
  const rows = rowsFor(collection, schemaVersion);
  const values: unknown[] = [collection.workspace_id, collection.id, collection.name, collection.active_schema_version ?? 0];
  for (const column of RECORD_COLUMNS) values.push(rows.record[column]);
  for (const column of EVENT_COLUMNS) values.push(rows.event[column]);
  if (rows.audit) for (const column of AUDIT_COLUMNS) values.push(rows.audit[column]);
  const written = await (rows.audit ? createRecordEventAndAudit : createRecordAndEvent).run(deps.db, values);
  if (written.length === 0) return null;
  // Other processes' workers were woken by the statement's NOTIFY; this one's is woken here.
  notifyEventsWritten();
  return rows;
}
