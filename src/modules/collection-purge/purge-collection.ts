import { lockParentRow } from '../../db/parent-row-lock.js';
import type { Deps } from '../../deps.js';
import { recordAudit } from '../audit/audit.js';
import { findCollection, storedSettings, type CollectionContext } from '../collections/collections.js';
import { storedSearchFields } from '../collections/search-settings.js';
import { forgetCollectionFiles, removeForgottenContent } from '../files/file-cleanup.js';
import { dropAllIndexes } from '../indexes/indexes.js';
import { holdSearchTriggers, matchSearchTriggers } from '../collections/search-triggers.js';
import { forgetSubmissionCounts } from '../submissions/submission-counts.js';
import { announceErasure, eraseRecordData, type ErasedRecords } from '../records/erase-record-data.js';

/**
 * Deletes a collection for good with everything in it: records, files (content included),
 * schema versions and indexes (with the database indexes behind them), and every copy of its
 * records' data kept elsewhere (eraseRecordData), in one transaction. It reaches into every
 * module that keeps something per collection, so it sits above them all rather than in
 * collections/, which they all build on.
 */
export async function purgeCollection(deps: Deps, context: CollectionContext, idOrName: string): Promise<void> {
  const now = deps.clock.now();
  const erased = await deps.db.transaction().execute(async (trx): Promise<ErasedRecords> => {
    const current = await findCollection(trx, context.workspaceId, idOrName, { includeTrashed: true });
    const searches = storedSearchFields(storedSettings(current)) !== null;
    if (searches) {
      // The collection's row first, then the search triggers' lock, as an index build takes its row
      // and then a lock on records: neither waits for the other holding what the other needs.
      await lockParentRow(trx, 'collections', current.id);
      await holdSearchTriggers(trx, deps.dialect);
    }
    const erased = { workspaceId: context.workspaceId, collectionId: current.id, recordId: null, since: new Date(current.created_at) };
    await dropAllIndexes(trx, deps.dialect, context.workspaceId, current.id);
    await forgetCollectionFiles(trx, now, context.workspaceId, current.id);
    await trx.deleteFrom('records').where('collection_id', '=', current.id).execute();
    await eraseRecordData(trx, erased);
    await trx.deleteFrom('schema_versions').where('collection_id', '=', current.id).execute();
    await forgetSubmissionCounts(deps, trx, context.workspaceId, current.id);
    await trx.deleteFrom('collections').where('id', '=', current.id).execute();
    // After the records went, so the search triggers took their search rows along.
    if (searches) await matchSearchTriggers(trx, deps.dialect);
    await recordAudit(trx, now, context.meta, {
      workspaceId: context.workspaceId,
      actor: context.actor,
      action: 'collection.purged',
      target: { type: 'collection', id: current.id },
      details: { name: current.name },
    });
    return erased;
  });
  announceErasure(erased);
  await removeForgottenContent(deps, context.workspaceId);
}
