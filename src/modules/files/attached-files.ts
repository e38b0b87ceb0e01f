import { directQuery } from '../../db/direct-query.js';
import type { Executor } from '../../db/schema.js';

/** Ids in one statement: the list is bound as one JSON value, and a page has at most 1000 records. */
const BATCH = 1000;

interface AttachedRow {
  record_id: string;
  file_id: string;
}

/**
 * The files of the records whose ids are in parameter 2, a JSON array: one statement text
 * whatever the page's length (so one prepared statement), through the direct path.
 */
const filesOfRecords = directQuery<AttachedRow>('plainbase_files_of_records', (parameter, dialect) => `
  select record_id, file_id from record_files
  where workspace_id = ${parameter(1)} and record_id in (${dialect.jsonArrayTexts(parameter(2))})
  order by attached_at, file_id`);

/** The files of one record (a write's answer; a get reads them in its own statement): a plain equality, cheaper than a list of one. */
const filesOfRecord = directQuery<AttachedRow>('plainbase_files_of_record', (parameter) => `
  select record_id, file_id from record_files where workspace_id = ${parameter(1)} and record_id = ${parameter(2)}
  order by attached_at, file_id`);

/**
 * Whether the collection holds any file (trashed ones included). A file is attached only to
 * records of its own collection, and its attachments go with its row, so a collection without
 * files has no attachments: a page of its records needs no files statement. One probe of the
 * index files_collection, cheaper than looking up a page's ids.
 */
const anyFileOf = directQuery<{ found: number }>('plainbase_any_file_of_collection', (parameter) => `
  select 1 as found from files where workspace_id = ${parameter(1)} and collection_id = ${parameter(2)} limit 1`);

/**
 * A subquery of the ids of the files attached to the row `record` (a table name or alias of
 * records) names, oldest attachment first, joined by commas (ids have none); null for none. For
 * statements that read records with their files in one go (a get, a list on PostgreSQL).
 * string_agg with ORDER BY is the same on both engines (SQLite ≥ 3.44).
 */
export const attachedFileIdsSql = (record: string): string =>
  `(select string_agg(f.file_id, ',' order by f.attached_at, f.file_id) from record_files f where f.workspace_id = ${record}.workspace_id and f.record_id = ${record}.id)`;

/** The ids in attachedFileIdsSql's text. */
export const attachedFileIdsOf = (text: string | null | undefined): string[] => (text ? text.split(',') : []);

/**
 * The ids of the files attached to each of the records, oldest attachment first. One query per
 * page of records, so a record list costs one more indexed lookup, not one per record.
 */
export async function attachedFileIds(executor: Executor, workspaceId: string, recordIds: readonly string[]): Promise<Map<string, string[]>> {
  const byRecord = new Map<string, string[]>();
  const add = (rows: AttachedRow[]) => {
    for (const row of rows) {
      const files = byRecord.get(row.record_id);
      if (files) files.push(row.file_id);
      else byRecord.set(row.record_id, [row.file_id]);
    }
  };
  if (recordIds.length === 1) {
    add(await filesOfRecord.run(executor, [workspaceId, recordIds[0]]));
    return byRecord;
  }
  for (let start = 0; start < recordIds.length; start += BATCH) {
    add(await filesOfRecords.run(executor, [workspaceId, JSON.stringify(recordIds.slice(start, start + BATCH))]));
  }
  return byRecord;
}

/**
 * Fills in `files` of each record view (the representation's list of attached file ids).
 * `collectionId`, when all the records are of that collection, lets a page of a collection that
 * holds no files skip the lookup.
 */
export async function withAttachedFiles<T extends { id: string; files: string[] }>(executor: Executor, workspaceId: string, views: T[], collectionId?: string): Promise<T[]> {
  if (views.length === 0) return views;
  if (collectionId !== undefined && views.length > 1 && (await anyFileOf.run(executor, [workspaceId, collectionId])).length === 0) {
    for (const view of views) view.files = [];
    return views;
  }
  const byRecord = await attachedFileIds(executor, workspaceId, views.map((view) => view.id));
  for (const view of views) view.files = byRecord.get(view.id) ?? [];
  return views;
}
