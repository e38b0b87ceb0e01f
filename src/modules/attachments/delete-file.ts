import type { Deps } from '../../deps.js';
import { findCollection, type CollectionContext } from '../collections/collections.js';
import { forgetFiles, removeForgottenContent } from '../files/file-cleanup.js';
import { auditFileKeyWrite, findFile } from '../files/files.js';
import { detachEverywhere } from './attachments.js';

/**
 * Deletes a file: its attachments (record.updated for each live record that held it), its row, its
 * content. It lives beside attaching rather than in files/ because it changes the records that
 * held the file, and records build on files.
 */
export async function deleteFile(deps: Deps, context: CollectionContext, idOrName: string, fileId: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const collection = await findCollection(trx, context.workspaceId, idOrName);
    const file = await findFile(trx, collection, fileId);
    await detachEverywhere(trx, deps.dialect, now, collection, file.id, context);
    await forgetFiles(trx, now, context.workspaceId, [file.id]);
    await auditFileKeyWrite(trx, now, context, 'file.deleted', file.id, collection.id);
  });
  await removeForgottenContent(deps, context.workspaceId);
}
