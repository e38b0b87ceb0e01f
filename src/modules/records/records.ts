import { jsonRefusal } from '../../accepted-json.js';
import type { Deps } from '../../deps.js';
import { isUniqueViolation } from '../../db/db-errors.js';
import { writeJson } from '../../db/dialect.js';
import { directQuery } from '../../db/direct-query.js';
import { writeTransaction } from '../../db/group-commit.js';
import { insertRows } from '../../db/insert-rows.js';
import type { CollectionsTable, Executor, RecordsTable } from '../../db/schema.js';
import { AppError, conflict, invalidRequest, notFound } from '../../errors.js';
import { hasPrefix, newId } from '../../ids.js';
import { newAuditRow, recordAudit, type AuditInput } from '../audit/audit.js';
import { keyGuardSql, keyGuardValues, type KeyGuess } from '../keys/key-guess.js';
import { collectionInTrash, findCollection, type CollectionContext } from '../collections/collections.js';
import { rememberCollection } from '../collections/remembered-collections.js';
import { emitEvent, newEventRow, type EventType } from '../events/outbox.js';
import { attachedFileIdsOf, attachedFileIdsSql, withAttachedFiles } from '../files/attached-files.js';
import { forgetRecordFiles, removeForgottenContent } from '../files/file-cleanup.js';
import { findStoredResponse, storeResponse, type IdempotencyKey, type StoredResponse } from '../idempotency/idempotency.js';
import { recordChecker } from '../schemas/schema-versions.js';
import { keepVersion, newVersionRow, type VersionChange } from '../history/record-versions.js';
import { announceErasure, eraseRecordData, type ErasedRecords } from './erase-record-data.js';
import { applyMergePatch } from './merge-patch.js';
import { createInOneStatement } from './one-statement-create.js';
import {
  newRecordRow,
  RECORD_COLUMNS,
  RECORD_READ_COLUMNS,
  recordEventData,
  toRecordRead,
  toRecordView,
  type RecordData,
  type RecordRead,
  type RecordView,
} from './record-shape.js';

/** A record, its revision (goes up on every change) and its ETag, which is the revision quoted. */
export interface VersionedRecord {
  record: RecordView;
  revision: number;
  etag: string;
}

export const etagOf = (revision: number): string => `"${revision}"`;

/** A read record and its ETag. */
export interface VersionedRecordRead {
  record: RecordRead;
  etag: string;
}

export function assertRecordData(data: unknown): asserts data is RecordData {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw invalidRequest('A record\'s data must be a JSON object.', { field: 'body.data' });
  }
  // The JSON body parser has checked a request's data already; this holds for every other caller.
  const refusal = jsonRefusal(data, { name: 'data', envelope: 0, checkText: true });
  if (refusal) throw invalidRequest(refusal.message, { field: `body.${refusal.field}`, ...(refusal.limit === undefined ? {} : { limit: refusal.limit }) });
}

/** A record event (docs/design.md §7). */
const eventOf = (collection: CollectionsTable, type: EventType, record: RecordView) => ({
  workspaceId: collection.workspace_id,
  collectionId: collection.id,
  type,
  data: recordEventData(record),
});

/**
 * Writes made with a key are audited (which key, for whom); a person's record writes are not,
 * as the event outbox already tells what changed and they would double every write.
 */
async function auditKeyWrite(executor: Executor, at: Date, context: CollectionContext, action: string, recordId: string, collectionId: string): Promise<void> {
  const entry = keyWriteAudit(context, action, recordId, collectionId);
  if (entry) await recordAudit(executor, at, context.meta, entry);
}

const keyWriteAudit = (context: CollectionContext, action: string, recordId: string, collectionId: string): AuditInput | null =>
  context.actor.type === 'person' ? null : { workspaceId: context.workspaceId, actor: context.actor, action, target: { type: 'record', id: recordId }, details: { collectionId } };

/** A new record's row and view. */
function newRecord(deps: Deps, context: CollectionContext, collection: CollectionsTable, data: RecordData, schemaVersion: number | null, now: Date) {
  const row = newRecordRow({
    id: newId('rec', now.getTime()),
    workspaceId: context.workspaceId,
    collectionId: collection.id,
    dataJson: writeJson(data),
    schemaVersion,
    at: now.toISOString(),
  });
  return { row, view: toRecordView(deps.dialect, row, data) };
}

export interface CreateOptions {
  idempotency?: IdempotencyKey;
  /** The caller's key, when it was guessed (keys/key-guess.ts). */
  guess?: KeyGuess;
  /**
   * Files of the collection to attach in the same transaction (a form's file fields, uploaded
   * just before): the record is created holding them, revision 1, one record.created.
   */
  files?: readonly string[];
}

/**
 * Creates a record, checked against the active schema version; replays an earlier response for a
 * repeated Idempotency-Key.
 *
 * One create, with two faster ways in front of the plain one where the engine allows. Each was
 * measured against the plain way in the same bench:data run (BENCH_SLOW_PATHS, 10 connections,
 * on a shared 2-core machine, so the spread is wide) and kept for what it earns:
 * - PostgreSQL, the collection remembered: one statement (one-statement-create.ts), 1.6 to 2.5
 *   times the creates per second of the transaction below;
 * - SQLite: the transaction below shares its commit with others (db/group-commit.ts), 1.4 to 1.6
 *   times the creates per second of a commit each.
 * The transaction is what any create falls back to (an idempotency key, a collection not
 * remembered or changed since), so it stays; the fast ways write the same rows.
 */
export async function createRecord(
  deps: Deps,
  context: CollectionContext,
  idOrName: string,
  data: RecordData,
  options: CreateOptions = {},
): Promise<StoredResponse & { etag?: string }> {
  assertRecordData(data);
  const now = deps.clock.now();
  const { idempotency, guess } = options;
  const files = options.files ?? [];
  if (idempotency) {
    await guess?.confirm();
    const stored = await findStoredResponse(deps.db, idempotency, now);
    if (stored) return stored;
  }
  if (!idempotency && files.length === 0) {
    const created = await createInOneStatement(deps, context.workspaceId, idOrName, data, (collection, schemaVersion) => {
      const { row, view } = newRecord(deps, context, collection, data, schemaVersion, now);
      const audit = keyWriteAudit(context, 'record.created', row.id, collection.id);
      return {
        record: row,
        version: newVersionRow(row, 'created', now, context),
        view,
        event: newEventRow(now, eventOf(collection, 'record.created', view)),
        audit: audit && newAuditRow(now, context.meta, audit),
      };
    }, guess);
    if (created) return { status: 201, body: created.view, etag: etagOf(1) };
  }
  await guess?.confirm();
  try {
    return await writeTransaction(deps.db, async (trx) => {
      const collection = await findCollection(trx, context.workspaceId, idOrName);
      rememberCollection(deps, context.workspaceId, idOrName, collection);
      const schemaVersion = (await recordChecker(trx, collection))(data);
      const { row, view } = newRecord(deps, context, collection, data, schemaVersion, now);
      await insertRows(trx, 'records', RECORD_COLUMNS, [row]);
      await keepVersion(trx, row, 'created', now, context);
      if (files.length > 0) view.files = await attachNewFiles(trx, collection, row.id, files, now);
      await emitEvent(trx, now, eventOf(collection, 'record.created', view));
      await auditKeyWrite(trx, now, context, 'record.created', row.id, collection.id);
      const response = { status: 201, body: view };
      if (idempotency) await storeResponse(trx, idempotency, now, response);
      return { ...response, etag: etagOf(1) };
    });
  } catch (error) {
    // Another request with the same key committed first: answer what it answered.
    if (idempotency && isUniqueViolation(error)) {
      const stored = await findStoredResponse(deps.db, idempotency, now);
      if (stored) return stored;
    }
    throw error;
  }
}

/** Attaches files of the collection to a record being created; a file of another collection is a 409. */
async function attachNewFiles(trx: Executor, collection: CollectionsTable, recordId: string, fileIds: readonly string[], at: Date): Promise<string[]> {
  // In the order a read lists them: one attached_at, so by id.
  const unique = [...new Set(fileIds)].sort();
  const found = await trx
    .selectFrom('files')
    .select('id')
    .where('workspace_id', '=', collection.workspace_id)
    .where('collection_id', '=', collection.id)
    .where('id', 'in', unique)
    .execute();
  if (found.length !== unique.length) throw conflict('A file to attach is not a file of this collection.', { field: 'files' });
  await trx
    .insertInto('record_files')
    .values(unique.map((fileId) => ({ record_id: recordId, file_id: fileId, workspace_id: collection.workspace_id, collection_id: collection.id, attached_at: at.toISOString() })))
    .execute();
  return unique;
}

/** A record by id: every read and write of one record starts here, so it takes the direct path (db/direct-query.ts). */
const recordById = directQuery<RecordsTable>('plainbase_record_by_id', (parameter) => `
  select ${RECORD_COLUMNS.join(', ')}
  from records where workspace_id = ${parameter(1)} and collection_id = ${parameter(2)} and id = ${parameter(3)}`);

async function findRecord(executor: Executor, collection: CollectionsTable, recordId: string): Promise<RecordsTable> {
  const [row] = await recordById.run(executor, [collection.workspace_id, collection.id, recordId]);
  if (!row) throw notFound('record');
  return row;
}

/** What readRecordBy* answers: a row for the collection if the workspace has it, one for the record if that collection holds it. */
interface CollectionPart {
  part: 1;
  collection_id: string;
  collection_name: string;
  collection_trashed_at: string | null;
}
type RecordPart = Pick<RecordsTable, (typeof RECORD_READ_COLUMNS)[number]> & {
  part: 2;
  /** The attached files' ids as attachedFileIdsSql gives them (files/attached-files.ts). */
  files: string | null;
};

/**
 * A get in one statement: the collection (by id or by name), the record, and its files, where
 * findCollection, findRecord and attachedFileIds would take three. A get is the hottest read,
 * and each statement costs more than the work it does (one index probe); the answers and the
 * errors are the same.
 *
 * Two selects joined by UNION ALL rather than the collection LEFT JOIN the record: the same
 * answer, and on SQLite 9 µs a read instead of 22 (the join costs about 12 µs by itself, even
 * reading only the two ids; docs/performance.md, "Data API").
 */
const readRecordBy = (column: 'id' | 'name', keyGuarded: boolean) =>
  directQuery<CollectionPart | RecordPart>(`plainbase_read_record_by_collection_${column}${keyGuarded ? '_key_guarded' : ''}`, (parameter) => {
    const collectionIs = `workspace_id = ${parameter(1)} and ${column} = ${parameter(2)}`;
    // A guessed key's guard (keys/key-guess.ts) on both selects: nothing is answered unless it holds.
    const keyHolds = keyGuarded ? ` and ${keyGuardSql(parameter, 4)}` : '';
    return `
    select 1 as part, id as collection_id, name as collection_name, trashed_at as collection_trashed_at,
      ${RECORD_READ_COLUMNS.map((recordColumn) => `null as ${recordColumn}`).join(', ')}, null as files
    from collections where ${collectionIs}${keyHolds}
    union all
    select 2, null, null, null, ${RECORD_READ_COLUMNS.map((recordColumn) => `r.${recordColumn}`).join(', ')}, ${attachedFileIdsSql('r')}
    from records r
    where r.workspace_id = ${parameter(1)} and r.id = ${parameter(3)} and r.collection_id = (select id from collections where ${collectionIs})${keyHolds}`;
  });
const readRecord = {
  id: { plain: readRecordBy('id', false), keyGuarded: readRecordBy('id', true) },
  name: { plain: readRecordBy('name', false), keyGuarded: readRecordBy('name', true) },
};

export async function getRecord(
  deps: Deps,
  workspaceId: string,
  idOrName: string,
  recordId: string,
  options: { includeTrashed?: boolean; guess?: KeyGuess } = {},
): Promise<VersionedRecordRead> {
  const queries = hasPrefix(idOrName, 'col') ? readRecord.id : readRecord.name;
  const { guess } = options;
  let rows: (CollectionPart | RecordPart)[] = [];
  if (guess && !guess.settled) {
    rows = await queries.keyGuarded.run(deps.db, [workspaceId, idOrName, recordId, ...keyGuardValues(guess.guard)]);
    // No row: the key is not as guessed, or there is no such collection; the full check tells.
    if (rows.length > 0) guess.held();
    else await guess.confirm();
  }
  if (rows.length === 0) rows = await queries.plain.run(deps.db, [workspaceId, idOrName, recordId]);
  // Each select's other columns are null: only its own are read.
  const collection = rows.find((found): found is CollectionPart => found.part === 1);
  const row = rows.find((found): found is RecordPart => found.part === 2);
  // The same refusals, in the same order, as findCollection then findRecord.
  if (!collection) throw notFound('collection');
  if (collection.collection_trashed_at !== null) throw collectionInTrash(collection.collection_name);
  if (!row) throw notFound('record');
  if (row.trashed_at && !options.includeTrashed) {
    throw new AppError('NOT_FOUND', 'The record is in the trash; read it with ?trashed=true or restore it.', { trashed: true });
  }
  const record = toRecordRead(deps.dialect, row, { collectionId: collection.collection_id });
  record.files = attachedFileIdsOf(row.files);
  return { record, etag: etagOf(row.revision) };
}

function checkIfMatch(row: RecordsTable, ifMatch: string | undefined): void {
  if (ifMatch === undefined || ifMatch === '*') return;
  const accepted = ifMatch.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  if (!accepted.includes(etagOf(row.revision))) {
    throw new AppError('PRECONDITION_FAILED', 'The record changed since you read it; read it again and retry.', { etag: etagOf(row.revision) });
  }
}

/**
 * PATCH merges (JSON Merge Patch), PUT replaces; both honour If-Match and the active schema. An
 * update that leaves the data and its schema version as they are changes nothing: no new
 * revision, no event, no audit entry (docs/data-api.md), so a caller cannot make a record look
 * changed, or learn anything, by sending what is already there.
 */
export async function updateRecord(
  deps: Deps,
  context: CollectionContext,
  idOrName: string,
  recordId: string,
  input: { data: RecordData; mode: 'merge' | 'replace'; ifMatch?: string; change?: VersionChange },
): Promise<VersionedRecord> {
  assertRecordData(input.data);
  const now = deps.clock.now();
  return writeTransaction(deps.db, async (trx) => {
    const collection = await findCollection(trx, context.workspaceId, idOrName);
    const current = await findRecord(trx, collection, recordId);
    if (current.trashed_at) throw conflict('The record is in the trash; restore it before changing it.');
    checkIfMatch(current, input.ifMatch);
    const currentData = deps.dialect.readJson(current.data) as RecordData;
    const data = input.mode === 'merge' ? (applyMergePatch(currentData, input.data) as RecordData) : input.data;
    const schemaVersion = (await recordChecker(trx, collection))(data);
    if (schemaVersion === current.schema_version && sameJson(data, currentData)) {
      const [record] = await withAttachedFiles(trx, context.workspaceId, [toRecordView(deps.dialect, current, currentData)]);
      return { record: record!, revision: current.revision, etag: etagOf(current.revision) };
    }
    const changes = { data: writeJson(data), schema_version: schemaVersion, revision: current.revision + 1, updated_at: now.toISOString() };
    // The revision in the condition makes a concurrent writer that read the same revision lose.
    const result = await trx.updateTable('records').set(changes).where('id', '=', current.id).where('revision', '=', current.revision).executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw new AppError('PRECONDITION_FAILED', 'The record changed while this update ran; retry.');
    await keepVersion(trx, { ...current, ...changes }, input.change ?? (input.mode === 'merge' ? 'updated' : 'replaced'), now, context);
    const view = toRecordView(deps.dialect, { ...current, ...changes }, data);
    await emitEvent(trx, now, eventOf(collection, 'record.updated', view));
    await auditKeyWrite(trx, now, context, 'record.updated', current.id, collection.id);
    const [record] = await withAttachedFiles(trx, context.workspaceId, [view]);
    return { record: record!, revision: changes.revision, etag: etagOf(changes.revision) };
  });
}

/** Moves a record to the trash, or back out of it. */
export async function setRecordTrashed(
  deps: Deps,
  context: CollectionContext,
  idOrName: string,
  recordId: string,
  trashed: boolean,
  ifMatch?: string,
): Promise<VersionedRecord> {
  const now = deps.clock.now();
  return writeTransaction(deps.db, async (trx) => {
    const collection = await findCollection(trx, context.workspaceId, idOrName);
    const current = await findRecord(trx, collection, recordId);
    if (Boolean(current.trashed_at) === trashed) {
      throw conflict(trashed ? 'The record is already in the trash.' : 'The record is not in the trash.');
    }
    checkIfMatch(current, ifMatch);
    const changes = { trashed_at: trashed ? now.toISOString() : null, revision: current.revision + 1 };
    // As in updateRecord: a concurrent writer (a change by filter) that got there first wins.
    const result = await trx.updateTable('records').set(changes).where('id', '=', current.id).where('revision', '=', current.revision).executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw new AppError('PRECONDITION_FAILED', 'The record changed while this change ran; retry.');
    const row = { ...current, ...changes };
    await keepVersion(trx, row, trashed ? 'trashed' : 'restored', now, context);
    const view = toRecordView(deps.dialect, row);
    await emitEvent(trx, now, eventOf(collection, trashed ? 'record.deleted' : 'record.restored', view));
    await auditKeyWrite(trx, now, context, trashed ? 'record.trashed' : 'record.restored', row.id, collection.id);
    await withAttachedFiles(trx, context.workspaceId, [view]);
    return { record: view, revision: row.revision, etag: etagOf(row.revision) };
  });
}

/**
 * Deletes a record for good (a person with records:purge only); no event, an audit entry. Files
 * attached to no other record go with it, content included, and every copy of its data kept
 * elsewhere is erased in the same transaction (eraseRecordData).
 */
export async function purgeRecord(deps: Deps, context: CollectionContext, idOrName: string, recordId: string): Promise<void> {
  const now = deps.clock.now();
  const erased = await deps.db.transaction().execute(async (trx): Promise<ErasedRecords> => {
    const collection = await findCollection(trx, context.workspaceId, idOrName);
    const current = await findRecord(trx, collection, recordId);
    await forgetRecordFiles(trx, now, context.workspaceId, current.id);
    await trx.deleteFrom('records').where('id', '=', current.id).execute();
    const erased = { workspaceId: context.workspaceId, collectionId: collection.id, recordId: current.id, since: new Date(current.created_at) };
    await eraseRecordData(trx, erased);
    await recordAudit(trx, now, context.meta, {
      workspaceId: context.workspaceId,
      actor: context.actor,
      action: 'record.purged',
      target: { type: 'record', id: current.id },
      details: { collectionId: collection.id },
    });
    return erased;
  });
  announceErasure(erased);
  await removeForgottenContent(deps, context.workspaceId);
}

/**
 * Whether two values are the same JSON: the same numbers, strings, booleans and nulls, the same
 * array items in order, the same keys with the same values in any order (PostgreSQL's jsonb keeps
 * its own key order), whatever the objects' prototypes (a merge patch builds null-prototype
 * objects, so that no caller's key reaches a prototype).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((item, index) => sameJson(item, (b as unknown[])[index]));
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}
