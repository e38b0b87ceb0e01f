import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/schema.js';
import { rowLimit } from '../../db/row-limit.js';
import { fileStoreFor } from '../../storage/store-for.js';

/**
 * Deleting for good. File rows go in the transaction of the delete, and their content is written
 * down in `file_deletions` in that same transaction; the store lets go of it after the commit
 * (removeForgottenContent). A crash in between leaves the note, and the next delete in the
 * workspace finishes the job: content is never lost track of, and never removed while a row
 * still points at it.
 */

const BATCH = 500;
/** Content removals in flight at once: S3 takes one request per object. */
const REMOVALS_IN_FLIGHT = 8;

/** Deletes file rows (and their attachments) and notes their content for removal. */
export async function forgetFiles(executor: Executor, at: Date, workspaceId: string, fileIds: readonly string[]): Promise<void> {
  for (let start = 0; start < fileIds.length; start += BATCH) {
    const ids = fileIds.slice(start, start + BATCH);
    await executor
      .insertInto('file_deletions')
      .columns(['storage_key', 'workspace_id', 'created_at'])
      .expression((eb) => eb
        .selectFrom('files')
        .select((s) => ['storage_key', 'workspace_id', s.val(at.toISOString()).as('created_at')])
        .where('workspace_id', '=', workspaceId)
        .where('id', 'in', ids))
      .onConflict((conflict) => conflict.column('storage_key').doNothing())
      .execute();
    await executor.deleteFrom('record_files').where('workspace_id', '=', workspaceId).where('file_id', 'in', ids).execute();
    await executor.deleteFrom('files').where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute();
  }
}

/**
 * For a record deleted for good, in its transaction: its attachments go, and so do the files it
 * leaves attached to no record at all. Files never attached to it are not touched.
 */
export async function forgetRecordFiles(executor: Executor, at: Date, workspaceId: string, recordId: string): Promise<void> {
  const attached = await executor
    .selectFrom('record_files')
    .select('file_id')
    .where('workspace_id', '=', workspaceId)
    .where('record_id', '=', recordId)
    .execute();
  if (attached.length === 0) return;
  await executor.deleteFrom('record_files').where('workspace_id', '=', workspaceId).where('record_id', '=', recordId).execute();
  const ids = attached.map((row) => row.file_id);
  const stillUsed = new Set<string>();
  for (let start = 0; start < ids.length; start += BATCH) {
    const rows = await executor
      .selectFrom('record_files')
      .select('file_id')
      .where('workspace_id', '=', workspaceId)
      .where('file_id', 'in', ids.slice(start, start + BATCH))
      .execute();
    for (const row of rows) stillUsed.add(row.file_id);
  }
  await forgetFiles(executor, at, workspaceId, ids.filter((id) => !stillUsed.has(id)));
}

/** For a collection deleted for good, in its transaction: every file of it. */
export async function forgetCollectionFiles(executor: Executor, at: Date, workspaceId: string, collectionId: string): Promise<void> {
  await executor
    .insertInto('file_deletions')
    .columns(['storage_key', 'workspace_id', 'created_at'])
    .expression((eb) => eb
      .selectFrom('files')
      .select((s) => ['storage_key', 'workspace_id', s.val(at.toISOString()).as('created_at')])
      .where('workspace_id', '=', workspaceId)
      .where('collection_id', '=', collectionId))
    .onConflict((conflict) => conflict.column('storage_key').doNothing())
    .execute();
  await executor.deleteFrom('record_files').where('workspace_id', '=', workspaceId).where('collection_id', '=', collectionId).execute();
  await executor.deleteFrom('files').where('workspace_id', '=', workspaceId).where('collection_id', '=', collectionId).execute();
}

/**
 * After the commit: removes the content noted for removal in the workspace, then the notes. A
 * removal that fails (the store is down) keeps its note for the next time; the delete that
 * called this has succeeded all the same, since no row points at the content any more.
 */
export async function removeForgottenContent(deps: Deps, workspaceId: string): Promise<void> {
  const store = fileStoreFor(deps);
  for (;;) {
    const notes = await deps.db
      .selectFrom('file_deletions')
      .select('storage_key')
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at')
      .orderBy('storage_key')
      .limit(rowLimit(BATCH))
      .execute();
    const removed: string[] = [];
    for (let start = 0; start < notes.length; start += REMOVALS_IN_FLIGHT) {
      await Promise.all(notes.slice(start, start + REMOVALS_IN_FLIGHT).map(async ({ storage_key: key }) => {
        try {
          await store.remove(key);
          removed.push(key);
        } catch {
          // Left noted: retried by the next delete in this workspace.
        }
      }));
    }
    if (removed.length > 0) {
      await deps.db.deleteFrom('file_deletions').where('workspace_id', '=', workspaceId).where('storage_key', 'in', removed).execute();
    }
    // A short batch was the last; a batch where nothing could be removed would only repeat.
    if (notes.length < BATCH || removed.length === 0) return;
  }
}
