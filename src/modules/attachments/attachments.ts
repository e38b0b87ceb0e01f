import type { Deps } from '../../deps.js';
import type { Dialect } from '../../db/dialect.js';
import type { CollectionsTable, Executor, RecordsTable } from '../../db/schema.js';
import { AppError, conflict, notFound } from '../../errors.js';
import { recordAudit } from '../audit/audit.js';
import { findCollection, type CollectionContext } from '../collections/collections.js';
import { emitEvent } from '../events/outbox.js';
import { recordEventData, toRecordView } from '../records/record-shape.js';
import { etagOf, type VersionedRecord } from '../records/records.js';
import { withAttachedFiles } from '../files/attached-files.js';
import { keepVersion, type VersionAuthor } from '../history/record-versions.js';

/**
 * Attaching and detaching change the record (its `files`): its revision (ETag) goes up and
 * record.updated is emitted in the same transaction, as for any other change of a record.
 */

async function findLiveRecord(executor: Executor, collection: CollectionsTable, recordId: string): Promise<RecordsTable> {
  const row = await executor
    .selectFrom('records')
    .selectAll()
    .where('workspace_id', '=', collection.workspace_id)
    .where('collection_id', '=', collection.id)
    .where('id', '=', recordId)
    .executeTakeFirst();
  if (!row) throw notFound('record');
  if (row.trashed_at) throw conflict('The record is in the trash; restore it before changing its files.');
  return row;
}

/** A new revision of the record, its version (history) and its record.updated event. */
async function touchRecord(executor: Executor, dialect: Dialect, at: Date, collection: CollectionsTable, record: RecordsTable, author: VersionAuthor): Promise<RecordsTable> {
  const changes = { revision: record.revision + 1, updated_at: at.toISOString() };
  const result = await executor.updateTable('records').set(changes).where('id', '=', record.id).where('revision', '=', record.revision).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new AppError('PRECONDITION_FAILED', 'The record changed while its files were being changed; retry.');
  const row = { ...record, ...changes };
  await keepVersion(executor, row, 'updated', at, author);
  await emitEvent(executor, at, {
    workspaceId: collection.workspace_id,
    collectionId: collection.id,
    type: 'record.updated',
    data: recordEventData(toRecordView(dialect, row)),
  });
  return row;
}

async function auditKeyWrite(executor: Executor, at: Date, context: CollectionContext, action: string, recordId: string, fileId: string, collectionId: string): Promise<void> {
  if (context.actor.type === 'person') return;
  await recordAudit(executor, at, context.meta, {
    workspaceId: context.workspaceId,
    actor: context.actor,
    action,
    target: { type: 'record', id: recordId },
    details: { collectionId, fileId },
  });
}

async function versionedWithFiles(executor: Executor, dialect: Dialect, row: RecordsTable): Promise<VersionedRecord> {
  const [record] = await withAttachedFiles(executor, row.workspace_id, [toRecordView(dialect, row)]);
  return { record: record!, revision: row.revision, etag: etagOf(row.revision) };
}

/**
 * Attaches a file to a record of its own collection (never another's). Attaching a file the
 * record already holds changes nothing and emits nothing.
 */
export async function attachFile(deps: Deps, context: CollectionContext, idOrName: string, recordId: string, fileId: string): Promise<VersionedRecord> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const collection = await findCollection(trx, context.workspaceId, idOrName);
    const record = await findLiveRecord(trx, collection, recordId);
    const file = await trx
      .selectFrom('files')
      .select(['id', 'collection_id'])
      .where('workspace_id', '=', context.workspaceId)
      .where('id', '=', fileId)
      .executeTakeFirst();
    if (!file) throw new AppError('NOT_FOUND', 'No such file in this workspace.', { field: 'body.fileId' });
    if (file.collection_id !== collection.id) {
      throw conflict('The file belongs to another collection; a file can be attached only to records of its own collection.', { field: 'body.fileId' });
    }
    const inserted = await trx
      .insertInto('record_files')
      .values({ record_id: record.id, file_id: file.id, workspace_id: context.workspaceId, collection_id: collection.id, attached_at: now.toISOString() })
      .onConflict((onConflict) => onConflict.columns(['record_id', 'file_id']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return versionedWithFiles(trx, deps.dialect, record);
    const touched = await touchRecord(trx, deps.dialect, now, collection, record, context);
    await auditKeyWrite(trx, now, context, 'record.file_attached', record.id, file.id, collection.id);
    return versionedWithFiles(trx, deps.dialect, touched);
  });
}

/** Detaches a file from a record; the file itself stays (delete it to remove it). */
export async function detachFile(deps: Deps, context: CollectionContext, idOrName: string, recordId: string, fileId: string): Promise<VersionedRecord> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const collection = await findCollection(trx, context.workspaceId, idOrName);
    const record = await findLiveRecord(trx, collection, recordId);
    const removed = await trx
      .deleteFrom('record_files')
      .where('workspace_id', '=', context.workspaceId)
      .where('record_id', '=', record.id)
      .where('file_id', '=', fileId)
      .executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) throw new AppError('NOT_FOUND', 'That file is not attached to this record.');
    const touched = await touchRecord(trx, deps.dialect, now, collection, record, context);
    await auditKeyWrite(trx, now, context, 'record.file_detached', record.id, fileId, collection.id);
    return versionedWithFiles(trx, deps.dialect, touched);
  });
}

/**
 * In the transaction that deletes a file: every record holding it lets go, and each live one
 * gets a new revision and record.updated. Records in the trash let go quietly: they emit
 * nothing until restored, like any change they cannot have.
 */
export async function detachEverywhere(executor: Executor, dialect: Dialect, at: Date, collection: CollectionsTable, fileId: string, author: VersionAuthor): Promise<void> {
  const holders = await executor
    .selectFrom('record_files')
    .innerJoin('records', 'records.id', 'record_files.record_id')
    .selectAll('records')
    .where('record_files.workspace_id', '=', collection.workspace_id)
    .where('record_files.file_id', '=', fileId)
    .orderBy('records.id')
    .execute();
  await executor.deleteFrom('record_files').where('workspace_id', '=', collection.workspace_id).where('file_id', '=', fileId).execute();
  for (const record of holders) {
    if (!record.trashed_at) await touchRecord(executor, dialect, at, collection, record, author);
    else {
      await executor.updateTable('records').set({ revision: record.revision + 1 }).where('id', '=', record.id).execute();
      await keepVersion(executor, { ...record, revision: record.revision + 1 }, 'updated', at, author);
    }
  }
}
