import type { Deps } from '../../deps.js';
import { findCollection, type CollectionContext } from '../collections/collections.js';
import { findVersion, listVersions, type RecordVersion } from '../history/record-versions.js';
import { getRecord, updateRecord, type VersionedRecord } from './records.js';

/**
 * A record's history as the API answers it (docs/history.md): reading needs the record to exist
 * in the collection (in the trash too), so another workspace's or collection's record is a 404.
 */
async function recordScope(deps: Deps, workspaceId: string, idOrName: string, recordId: string) {
  const { record } = await getRecord(deps, workspaceId, idOrName, recordId, { includeTrashed: true });
  return { workspaceId, collectionId: record.collectionId, recordId: record.id };
}

export async function listRecordVersions(deps: Deps, workspaceId: string, idOrName: string, recordId: string, page: { limit: number; before?: number }): Promise<RecordVersion[]> {
  return listVersions(deps.db, deps.dialect, await recordScope(deps, workspaceId, idOrName, recordId), page);
}

export async function getRecordVersion(deps: Deps, workspaceId: string, idOrName: string, recordId: string, revision: number): Promise<RecordVersion> {
  return findVersion(deps.db, deps.dialect, await recordScope(deps, workspaceId, idOrName, recordId), revision);
}

/**
 * Puts a version's data back as a new revision (change `reverted`): a replace like PUT, so
 * If-Match, the active schema and record.updated apply as to any update. Versions are never
 * changed, so reading the version before the update's transaction reads what it will write.
 */
export async function restoreRecordVersion(deps: Deps, context: CollectionContext, idOrName: string, recordId: string, revision: number, ifMatch?: string): Promise<VersionedRecord> {
  const collection = await findCollection(deps.db, context.workspaceId, idOrName);
  const version = await findVersion(deps.db, deps.dialect, await recordScope(deps, context.workspaceId, collection.id, recordId), revision);
  return updateRecord(deps, context, collection.id, recordId, { data: version.data, mode: 'replace', ifMatch, change: 'reverted' });
}
