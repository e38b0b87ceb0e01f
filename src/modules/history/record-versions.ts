import { sql, type SqlBool } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { ExpiringRows } from '../../db/expiring-rows.js';
import { insertRows } from '../../db/insert-rows.js';
import type { Executor, RecordsTable, RecordVersionsTable } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import type { Actor, RequestMeta } from '../audit/audit.js';

/**
 * Record history (docs/history.md): a row per revision of a record, holding the record as that
 * revision left it, so version N is the record at revision N. Each change writes its row in its
 * own transaction, so a change and its version are kept together or not at all.
 */

export type VersionChange = 'created' | 'updated' | 'replaced' | 'trashed' | 'restored' | 'reverted';

export const VERSION_COLUMNS = [
  'workspace_id', 'collection_id', 'record_id', 'revision', 'data', 'schema_version', 'change', 'changed_at', 'actor_type', 'actor_id', 'actor_name', 'request_id',
] as const;

/** Who made a change and under which request: what every version row takes from its request. */
export interface VersionAuthor {
  actor: Actor;
  meta: RequestMeta;
}

export interface RecordVersion {
  revision: number;
  data: Record<string, unknown>;
  schemaVersion: number | null;
  change: VersionChange;
  changedAt: string;
  changedBy: { type: string; id: string | null; name: string | null };
  requestId: string | null;
}

/** What a version is made of: a record's row as a change wrote it. */
export type VersionSource = Pick<RecordsTable, 'id' | 'workspace_id' | 'collection_id' | 'data' | 'schema_version' | 'revision'>;

/** A new version's row from values held already (a create writing its record in one statement). */
export const newVersionRow = (
  record: VersionSource,
  change: VersionChange,
  at: Date,
  author: VersionAuthor,
): RecordVersionsTable => ({
  workspace_id: record.workspace_id,
  collection_id: record.collection_id,
  record_id: record.id,
  revision: record.revision,
  data: record.data,
  schema_version: record.schema_version,
  change,
  changed_at: at.toISOString(),
  actor_type: author.actor.type,
  actor_id: author.actor.id,
  actor_name: author.actor.name,
  request_id: author.meta.requestId,
});

/**
 * Keeps the record as the change left it as its version: call it in the change's transaction,
 * with the record's row as written (its data as stored: JSON text on both engines).
 */
export async function keepVersion(executor: Executor, record: VersionSource, change: VersionChange, at: Date, author: VersionAuthor): Promise<void> {
  await insertRows(executor, 'record_versions', VERSION_COLUMNS, [newVersionRow(record, change, at, author)]);
}

/**
 * Keeps the first version of every record an import created: one statement over the ids the
 * import made (newId is monotonic, so they lie between its first and last), in the import's
 * transaction. A record of another writer in that range already has its version (its own
 * transaction wrote it), which the conflict clause leaves alone.
 */
export async function keepImportedVersions(
  executor: Executor,
  scope: { workspaceId: string; collectionId: string; firstId: string; lastId: string; at: Date },
  author: VersionAuthor,
): Promise<void> {
  const at = scope.at.toISOString();
  await sql`
    insert into record_versions (${sql.join(VERSION_COLUMNS.map((column) => sql.ref(column)))})
    select workspace_id, collection_id, id, revision, data, schema_version, 'created', ${at}, ${author.actor.type}, ${author.actor.id}, ${author.actor.name}, ${author.meta.requestId}
    from records
    where workspace_id = ${scope.workspaceId} and collection_id = ${scope.collectionId} and id >= ${scope.firstId} and id <= ${scope.lastId}
      and revision = 1 and created_at = ${at}
    on conflict do nothing`.execute(executor);
}

/** Up to `limit` of a record's versions, newest first, below revision `before` when given. */
export async function listVersions(
  executor: Executor,
  dialect: Dialect,
  record: { workspaceId: string; collectionId: string; recordId: string },
  page: { limit: number; before?: number },
): Promise<RecordVersion[]> {
  let query = executor
    .selectFrom('record_versions')
    .selectAll()
    .where('workspace_id', '=', record.workspaceId)
    .where('record_id', '=', record.recordId)
    .where('collection_id', '=', record.collectionId)
    .orderBy('revision', 'desc')
    .limit(page.limit);
  if (page.before !== undefined) query = query.where('revision', '<', page.before);
  return (await query.execute()).map((row) => toVersion(dialect, row));
}

/** One version of a record; 404 when the record has no such revision kept. */
export async function findVersion(executor: Executor, dialect: Dialect, record: { workspaceId: string; collectionId: string; recordId: string }, revision: number): Promise<RecordVersion> {
  const row = await executor
    .selectFrom('record_versions')
    .selectAll()
    .where('workspace_id', '=', record.workspaceId)
    .where('record_id', '=', record.recordId)
    .where('collection_id', '=', record.collectionId)
    .where('revision', '=', revision)
    .executeTakeFirst();
  if (!row) throw new AppError('NOT_FOUND', 'No such version of this record (it may be older than the history keeps).');
  return toVersion(dialect, row);
}

const toVersion = (dialect: Dialect, row: RecordVersionsTable): RecordVersion => ({
  revision: Number(row.revision),
  data: dialect.readJson(row.data) as Record<string, unknown>,
  schemaVersion: row.schema_version === null ? null : Number(row.schema_version),
  change: row.change as VersionChange,
  changedAt: row.changed_at,
  changedBy: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
  requestId: row.request_id,
});

/** Erases the history of records deleted for good: one record, or every record of a collection. */
export async function eraseVersions(executor: Executor, erased: { workspaceId: string; collectionId: string; recordId: string | null }): Promise<void> {
  let query = executor.deleteFrom('record_versions').where('workspace_id', '=', erased.workspaceId).where('collection_id', '=', erased.collectionId);
  if (erased.recordId !== null) query = query.where('record_id', '=', erased.recordId);
  await query.execute();
}

/**
 * Versions older than PLAINBASE_HISTORY_DAYS, for housekeeping to delete: walked by their time
 * (the changed_at index) up to the cutoff. A record's newest version stays however old it is: it
 * is the record as it is.
 */
export const oldVersions = (historyDays: number): ExpiringRows => {
  const cutoff = (now: Date) => new Date(now.getTime() - historyDays * 86_400_000).toISOString();
  return {
    name: 'recordVersions',
    table: 'record_versions',
    key: ['changed_at', 'workspace_id', 'record_id', 'revision'],
    until: cutoff,
    expired: (now) => sql<SqlBool>`changed_at < ${cutoff(now)} and exists (select 1 from record_versions as newer
      where newer.workspace_id = record_versions.workspace_id and newer.record_id = record_versions.record_id and newer.revision > record_versions.revision)`,
  };
};
