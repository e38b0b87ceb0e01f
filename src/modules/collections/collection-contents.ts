import type { Executor } from '../../db/schema.js';

/** What deleting a collection for good would destroy, so the dashboard can name it before asking. */
export interface CollectionContents {
  records: number;
  trashedRecords: number;
  files: number;
  fileBytes: number;
}

export async function countCollectionContents(executor: Executor, workspaceId: string, collectionId: string): Promise<CollectionContents> {
  const countRecords = async (trashed: boolean) => {
    const row = await executor
      .selectFrom('records')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('workspace_id', '=', workspaceId)
      .where('collection_id', '=', collectionId)
      .where('trashed_at', trashed ? 'is not' : 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  };
  const files = await executor
    .selectFrom('files')
    .select((eb) => [eb.fn.countAll<number | string>().as('count'), eb.fn.sum<number | string | null>('size').as('bytes')])
    .where('workspace_id', '=', workspaceId)
    .where('collection_id', '=', collectionId)
    .executeTakeFirstOrThrow();
  return { records: await countRecords(false), trashedRecords: await countRecords(true), files: Number(files.count), fileBytes: Number(files.bytes ?? 0) };
}
