import type { Executor } from '../../db/schema.js';

/** Ids in one IN list; SQLite binds at most 32766 parameters per statement. */
const BATCH = 1000;

/**
 * The ids of the files attached to each of the records, oldest attachment first. One query per
 * page of records, so a record list costs one more indexed lookup, not one per record.
 */
export async function attachedFileIds(executor: Executor, workspaceId: string, recordIds: readonly string[]): Promise<Map<string, string[]>> {
  const byRecord = new Map<string, string[]>();
  for (let start = 0; start < recordIds.length; start += BATCH) {
    const rows = await executor
      .selectFrom('record_files')
      .select(['record_id', 'file_id'])
      .where('workspace_id', '=', workspaceId)
      .where('record_id', 'in', recordIds.slice(start, start + BATCH))
      .orderBy('attached_at')
      .orderBy('file_id')
      .execute();
    for (const row of rows) {
      const files = byRecord.get(row.record_id);
      if (files) files.push(row.file_id);
      else byRecord.set(row.record_id, [row.file_id]);
    }
  }
  return byRecord;
}

/** Fills in `files` of each record view (the representation's list of attached file ids). */
export async function withAttachedFiles<T extends { id: string; files: string[] }>(executor: Executor, workspaceId: string, views: T[]): Promise<T[]> {
  if (views.length === 0) return views;
  const byRecord = await attachedFileIds(executor, workspaceId, views.map((view) => view.id));
  for (const view of views) view.files = byRecord.get(view.id) ?? [];
  return views;
}
