import type { Executor } from '../../db/schema.js';
import { rowLimit } from '../../db/row-limit.js';
import { findCollection } from '../collections/collections.js';
import { toFileView, type FileView } from './files.js';

/** A collection's files, oldest first (newest first if asked), each with the number of records it is attached to. */
export async function listFiles(
  executor: Executor,
  workspaceId: string,
  idOrName: string,
  options: { limit: number; after?: string; newestFirst?: boolean },
): Promise<(FileView & { attachedTo: number })[]> {
  const collection = await findCollection(executor, workspaceId, idOrName);
  let query = executor
    .selectFrom('files')
    .selectAll('files')
    .select((eb) =>
      eb.selectFrom('record_files').select((inner) => inner.fn.countAll<number | string>().as('n')).whereRef('record_files.file_id', '=', 'files.id').as('attached_to'),
    )
    .where('files.workspace_id', '=', workspaceId)
    .where('files.collection_id', '=', collection.id);
  // `after` is the last id of the previous page, in the order asked for.
  if (options.after) query = query.where('files.id', options.newestFirst ? '<' : '>', options.after);
  const rows = await query.orderBy('files.id', options.newestFirst ? 'desc' : 'asc').limit(rowLimit(options.limit)).execute();
  return rows.map(({ attached_to, ...row }) => ({ ...toFileView(row), attachedTo: Number(attached_to ?? 0) }));
}
