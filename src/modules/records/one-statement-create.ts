import { directQuery } from '../../db/direct-query.js';
import type { Dialect } from '../../db/dialect.js';
import type { AuditLogTable, CollectionsTable, EventsTable, RecordsTable, RecordVersionsTable } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { fastPathOn } from '../../db/fast-paths.js';
import { AUDIT_COLUMNS } from '../audit/audit.js';
import { rememberedCollection, rememberedGuard, rememberedGuardValues } from '../collections/remembered-collections.js';
import { EVENT_COLUMNS } from '../events/outbox.js';
import { VERSION_COLUMNS } from '../history/record-versions.js';
import { KEY_GUARD_PARAMETERS, keyGuardSql, keyGuardValues, type KeyGuess } from '../keys/key-guess.js';
import { notifyEventsWritten } from '../events/outbox-signal.js';
import { recordChecker } from '../schemas/schema-versions.js';
import { RECORD_COLUMNS, type RecordData } from './record-shape.js';

/**
 * A create as one statement, where one statement can write several tables
 * (Dialect.insertsTogether: PostgreSQL). The transactional create is seven round trips (BEGIN,
 * the collection, the record, its version, its event, NOTIFY, the audit entry, COMMIT); this is one: the record,
 * its first version (history/record-versions.ts), its record.created event and, when made with a key, its audit entry are inserted by a single
 * statement, which is a transaction of its own, so they are kept together or not at all.
 *
 * The data must be checked against the collection's active schema version before the statement,
 * so the collection has to be known first: it is the one remembered under the same reference
 * (collections/remembered-collections.ts), and the statement writes only if it still is that
 * one. Otherwise it writes nothing, and the caller creates the record the transactional way.
 * The caller's key, when it was only guessed (keys/key-guess.ts), is checked by the same guard.
 */

/** The rows a create writes: the record, its first version, its event, and the audit entry of a key's write (or null). */
export interface CreateRows {
  record: RecordsTable;
  version: RecordVersionsTable;
  event: Pick<EventsTable, (typeof EVENT_COLUMNS)[number]>;
  audit: AuditLogTable | null;
}

/** The statement's guard: the remembered collection, and with `keyGuarded` a guessed key too (keys/key-guess.ts). */
const statement = (name: string, tables: { table: string; columns: readonly string[] }[], keyGuarded: boolean) =>
  directQuery<{ written: unknown }>(name, (parameter, dialect: Dialect) => {
    if (!dialect.insertsTogether) throw new Error(`${name} needs Dialect.insertsTogether`);
    const guard = keyGuarded ? `${rememberedGuard(parameter)} and ${keyGuardSql(parameter, 5)}` : rememberedGuard(parameter);
    return dialect.insertsTogether(guard, keyGuarded ? 4 + KEY_GUARD_PARAMETERS : 4, tables, parameter);
  });

const RECORD_AND_EVENT = [{ table: 'records', columns: RECORD_COLUMNS }, { table: 'record_versions', columns: VERSION_COLUMNS }, { table: 'events', columns: EVENT_COLUMNS }];
const AUDITED = [...RECORD_AND_EVENT, { table: 'audit_log', columns: AUDIT_COLUMNS }];
const createRecordAndEvent = statement('plainbase_create_record', RECORD_AND_EVENT, false);
const createRecordEventAndAudit = statement('plainbase_create_record_audited', AUDITED, false);
const createRecordEventAndAuditForGuessedKey = statement('plainbase_create_record_audited_key_guarded', AUDITED, true);

/**
 * Creates the record in one statement if this process remembers the collection, the data passes
 * its schema version and the collection is still as remembered: answers the rows written, or
 * null when the caller must create the record the transactional way (nothing was written).
 */
export async function createInOneStatement<Rows extends CreateRows>(
  deps: Pick<Deps, 'db' | 'dialect' | 'services'>,
  workspaceId: string,
  idOrName: string,
  data: RecordData,
  rowsFor: (collection: CollectionsTable, schemaVersion: number | null) => Rows,
  guess?: KeyGuess,
): Promise<Rows | null> {
  if (!deps.dialect.insertsTogether || !fastPathOn('one-statement-create')) return null;
  const collection = rememberedCollection(deps, workspaceId, idOrName);
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
  const keyGuarded = guess !== undefined && !guess.settled;
  const values = rememberedGuardValues(collection);
  if (keyGuarded) values.push(...keyGuardValues(guess.guard));
  for (const column of RECORD_COLUMNS) values.push(rows.record[column]);
  for (const column of VERSION_COLUMNS) values.push(rows.version[column]);
  for (const column of EVENT_COLUMNS) values.push(rows.event[column]);
  if (rows.audit) for (const column of AUDIT_COLUMNS) values.push(rows.audit[column]);
  if (keyGuarded && !rows.audit) throw new Error('a create by a key writes its audit entry');
  const written = await (keyGuarded ? createRecordEventAndAuditForGuessedKey : rows.audit ? createRecordEventAndAudit : createRecordAndEvent).run(deps.db, values);
  if (written.length === 0) return null;
  if (keyGuarded) guess.held();
  // Other processes' workers were woken by the statement's NOTIFY; this one's is woken here.
  notifyEventsWritten();
  return rows;
}
