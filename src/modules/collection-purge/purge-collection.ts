import type { Deps } from '../../deps.js';
import { recordAudit } from '../audit/audit.js';
import { findCollection, type CollectionContext } from '../collections/collections.js';
import { forgetCollectionFiles, removeForgottenContent } from '../files/file-cleanup.js';
import { dropAllIndexes } from '../indexes/indexes.js';

/**
 * Deletes a collection for good with everything in it: records, files (content included),
 * schema versions and indexes (with the database indexes behind them). It reaches into every
 * module that keeps something per collection, so it sits above them all rather than in
 * collections/, which they all build on.
 */
export async function purgeCollection(deps: Deps, context: CollectionContext, idOrName: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const current = await findCollection(trx, context.workspaceId, idOrName, { includeTrashed: true });
    await dropAllIndexes(trx, deps.dialect, context.workspaceId, current.id);
    await forgetCollectionFiles(trx, now, context.workspaceId, current.id);
    await trx.deleteFrom('records').where('collection_id', '=', current.id).execute();
    await trx.deleteFrom('schema_versions').where('collection_id', '=', current.id).execute();
    await trx.deleteFrom('collections').where('id', '=', current.id).execute();
    await recordAudit(trx, now, context.meta, {
      workspaceId: context.workspaceId,
      actor: context.actor,
      action: 'collection.purged',
      target: { type: 'collection', id: current.id },
      details: { name: current.name },
    });
  });
  await removeForgottenContent(deps, context.workspaceId);
}
