import { sql } from 'kysely';
import { jsonRefusal } from '../../accepted-json.js';
import { writeJson } from '../../db/dialect.js';
import { rowLimit } from '../../db/row-limit.js';
import type { CollectionsTable, Executor } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { AppError, invalidRequest } from '../../errors.js';
import { newId } from '../../ids.js';
import { recordAudit } from '../audit/audit.js';
import { findCollection, type CollectionContext } from '../collections/collections.js';
import { announceEvents, EVENT_COLUMNS, EventBatch, startImportEvents, type EventType } from '../events/outbox.js';
import { newVersionRow, VERSION_COLUMNS, type VersionChange } from '../history/record-versions.js';
import { recordChecker } from '../schemas/schema-versions.js';
import { applyMergePatch } from './merge-patch.js';
import { compileFilter } from './query/compile.js';
import { parseFilter, type FilterNode } from './query/filter-parser.js';
import type { RecordData } from './record-shape.js';
import { sameJson } from './records.js';

/**
 * Changes by filter (docs/bulk-changes.md): a merge patch applied to every live record a filter
 * matches, or every such record moved to the trash, in one transaction. Each changed record gets
 * what a single change gives it: a new revision, a version in its history (change `updated` or
 * `trashed`, by the caller, under the request's id) and its event (record.updated or
 * record.deleted). Either every matched record is changed or none is.
 *
 * The work is set-based: the records are read once (locked on PostgreSQL, so that a single write
 * racing the change waits for it and then finds the new revision), the new versions are written
 * in bulk (Dialect.prepareRows: multi-row INSERTs on SQLite, COPY on PostgreSQL), and the records
 * take their new state from those versions in one UPDATE … FROM. The events are written in bulk
 * too; a large change's through an import's lane in the outbox (LANE_FROM).
 */

/** The filter that matches every live record: a bulk change must say so rather than send nothing. */
export const ALL_RECORDS = '*';

/** Schema failures an answer lists at most; `details.failed` counts them all. */
export const MAX_REPORTED_FAILURES = 10;

export interface BulkUpdateInput {
  filter: string;
  /** A JSON Merge Patch (RFC 7386) applied to each matched record's data. */
  patch: unknown;
  dryRun?: boolean;
}

export interface BulkUpdateResult {
  matched: number;
  updated: number;
  dryRun: boolean;
}

export interface BulkTrashResult {
  matched: number;
  trashed: number;
  dryRun: boolean;
}

/** A matched record as read for the change. */
interface MatchedRow {
  id: string;
  data: unknown;
  schema_version: number | null;
  revision: number;
}

/** A record's state after the change, as its new version holds it. */
interface ChangedRecord {
  id: string;
  revision: number;
  dataJson: string;
  schemaVersion: number | null;
}

function parseBulkFilter(text: string): FilterNode | undefined {
  if (text.trim() === ALL_RECORDS) return undefined;
  if (text.trim() === '') throw invalidRequest(`A bulk change needs a filter; "${ALL_RECORDS}" matches every record.`, { field: 'body.filter' });
  try {
    return parseFilter(text);
  } catch (error) {
    // The list's parser names its query field; here the filter is in the body.
    if (error instanceof AppError && error.details?.field === 'querystring.filter') throw new AppError(error.code, error.message, { ...error.details, field: 'body.filter' });
    throw error;
  }
}

function assertPatch(patch: unknown): asserts patch is RecordData {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw invalidRequest('patch must be a JSON object (a JSON Merge Patch of the records\' data).', { field: 'body.patch' });
  }
  const refusal = jsonRefusal(patch, { name: 'patch', envelope: 0, checkText: true });
  if (refusal) throw invalidRequest(refusal.message, { field: `body.${refusal.field}`, ...(refusal.limit === undefined ? {} : { limit: refusal.limit }) });
}

/**
 * The live records of the collection the filter matches, in id order; locked until the
 * transaction ends where the engine has row locks (`lock`). More than the cap is refused here,
 * before anything is written.
 */
async function matchedRecords(deps: Deps, trx: Executor, collection: CollectionsTable, filter: FilterNode | undefined, lock: boolean): Promise<MatchedRow[]> {
  const cap = deps.config.bulkMaxRecords;
  let query = trx
    .selectFrom('records')
    .select(['id', 'data', 'schema_version', 'revision'])
    .where('workspace_id', '=', collection.workspace_id)
    .where('collection_id', '=', collection.id)
    .where('trashed_at', 'is', null);
  if (filter) query = query.where(compileFilter(filter, deps.dialect));
  query = query.orderBy('id').limit(rowLimit(cap + 1));
  if (lock && deps.dialect.supportsRowLocks) query = query.forUpdate();
  const rows = (await query.execute()) as MatchedRow[];
  if (rows.length > cap) {
    throw invalidRequest(`The filter matches more than ${cap} records, the most one bulk change takes (PLAINBASE_BULK_MAX_RECORDS); narrow it and send several. Nothing was changed.`, {
      field: 'body.filter',
      limit: cap,
    });
  }
  return rows.map((row) => ({ ...row, revision: Number(row.revision), schema_version: row.schema_version === null ? null : Number(row.schema_version) }));
}

/** Applies a merge patch to every matched live record (records:update). */
export async function bulkUpdateRecords(deps: Deps, context: CollectionContext, idOrName: string, input: BulkUpdateInput): Promise<BulkUpdateResult> {
  const filter = parseBulkFilter(input.filter);
  assertPatch(input.patch);
  const patch = input.patch;
  const dryRun = input.dryRun ?? false;
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const collection = await findCollection(trx, context.workspaceId, idOrName);
    const check = await recordChecker(trx, collection);
    const rows = await matchedRecords(deps, trx, collection, filter, !dryRun);
    const changed: ChangedRecord[] = [];
    const failures: { recordId: string; errors: unknown }[] = [];
    let failed = 0;
    for (const row of rows) {
      const current = deps.dialect.readJson(row.data) as RecordData;
      const data = applyMergePatch(current, patch) as RecordData;
      let schemaVersion: number | null;
      try {
        schemaVersion = check(data);
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'SCHEMA_VALIDATION_FAILED') throw error;
        failed += 1;
        if (failures.length < MAX_REPORTED_FAILURES) failures.push({ recordId: row.id, errors: error.details?.errors ?? [] });
        continue;
      }
      // As a single update: a record the patch leaves as it is changes not at all.
      if (schemaVersion === row.schema_version && sameJson(data, current)) continue;
      changed.push({ id: row.id, revision: row.revision + 1, dataJson: writeJson(data), schemaVersion });
    }
    if (failed > 0) {
      const version = collection.active_schema_version;
      throw new AppError('SCHEMA_VALIDATION_FAILED', `${failed} of the ${rows.length} matched records would not match schema version ${version} after the patch; nothing was changed.`, {
        version,
        failed,
        records: failures,
      });
    }
    const result = { matched: rows.length, updated: changed.length, dryRun };
    if (dryRun || changed.length === 0) return result;
    await applyChanges(deps, trx, context, collection, changed, { change: 'updated', event: 'record.updated', at: now, set: 'update' });
    await recordAudit(trx, now, context.meta, {
      workspaceId: context.workspaceId,
      actor: context.actor,
      action: 'collection.records_bulk_updated',
      target: { type: 'collection', id: collection.id },
      details: { collectionId: collection.id, filter: input.filter, matched: result.matched, updated: result.updated },
    });
    return result;
  });
}

/** Moves every matched live record to the trash (records:delete). */
export async function bulkTrashRecords(deps: Deps, context: CollectionContext, idOrName: string, input: { filter: string; dryRun?: boolean }): Promise<BulkTrashResult> {
  const filter = parseBulkFilter(input.filter);
  const dryRun = input.dryRun ?? false;
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const collection = await findCollection(trx, context.workspaceId, idOrName);
    const rows = await matchedRecords(deps, trx, collection, filter, !dryRun);
    const result = { matched: rows.length, trashed: rows.length, dryRun };
    if (dryRun || rows.length === 0) return result;
    // The data as a single change's event writes it (JSON.stringify's form, not PostgreSQL's jsonb text).
    const changed = rows.map((row): ChangedRecord => ({ id: row.id, revision: row.revision + 1, dataJson: writeJson(deps.dialect.readJson(row.data)), schemaVersion: row.schema_version }));
    await applyChanges(deps, trx, context, collection, changed, { change: 'trashed', event: 'record.deleted', at: now, set: 'trash' });
    await recordAudit(trx, now, context.meta, {
      workspaceId: context.workspaceId,
      actor: context.actor,
      action: 'collection.records_bulk_trashed',
      target: { type: 'collection', id: collection.id },
      details: { collectionId: collection.id, filter: input.filter, matched: result.matched, trashed: result.trashed },
    });
    return result;
  });
}

/** Rows per prepared batch of versions and of events: bounds the text held at once. */
const BATCH_ROWS = 5000;

/**
 * From this many events a change writes them in an import's lane of the outbox (as an import
 * does): a long transaction's events would otherwise sit, invisible until its commit, in the
 * index every round of the webhook worker walks (migration 0014). Fewer go in as ordinary
 * events, fanned out in the next round like a single change's (the worker takes one lane of a
 * workspace per round, so many small changes each in a lane would queue behind one another).
 */
const LANE_FROM = 1000;

/**
 * Writes the changed records' versions, then their new state from those versions (one UPDATE …
 * FROM: the data is sent once), then their events. The join takes only versions of this change:
 * written at its time, one revision above the record's (a record's versions never go above its
 * own revision, so no other version can be there). Every changed record must be updated; a
 * shortfall (a record changed under the change, which the locks rule out) undoes it all.
 */
async function applyChanges(
  deps: Deps,
  trx: Executor,
  context: CollectionContext,
  collection: CollectionsTable,
  changed: readonly ChangedRecord[],
  how: { change: VersionChange; event: EventType; at: Date; set: 'update' | 'trash' },
): Promise<void> {
  const at = how.at.toISOString();
  const { workspace_id: workspaceId, id: collectionId } = collection;
  for (let start = 0; start < changed.length; start += BATCH_ROWS) {
    const values: unknown[] = [];
    for (const record of changed.slice(start, start + BATCH_ROWS)) {
      const source = { id: record.id, workspace_id: workspaceId, collection_id: collectionId, data: record.dataJson, schema_version: record.schemaVersion, revision: record.revision };
      const row = newVersionRow(source, how.change, how.at, context);
      for (const column of VERSION_COLUMNS) values.push(row[column]);
    }
    await deps.dialect.prepareRows('record_versions', VERSION_COLUMNS, values).write(trx);
  }
  const set = how.set === 'update'
    ? sql`data = v.data, schema_version = v.schema_version, revision = v.revision, updated_at = ${at}`
    : sql`trashed_at = ${at}, revision = v.revision`;
  const result = await sql`
    update records set ${set}
    from record_versions v
    where v.workspace_id = ${workspaceId} and v.collection_id = ${collectionId} and v.changed_at = ${at} and v.change = ${how.change}
      and records.workspace_id = ${workspaceId} and records.collection_id = ${collectionId} and records.trashed_at is null
      and records.id = v.record_id and v.revision = records.revision + 1`.execute(trx);
  if (Number(result.numAffectedRows ?? 0) !== changed.length) {
    throw new AppError('CONFLICT', 'Records changed while the bulk change ran; nothing was changed. Retry.');
  }
  // The record.* payload of a single change, {"record": {"id", "data"}}, around the data's text.
  const eventData = (record: ChangedRecord) => `{"record":{"id":"${record.id}","data":${record.dataJson}}}`;
  if (changed.length >= LANE_FROM) {
    const importId = await startImportEvents(trx, how.at, workspaceId);
    for (let start = 0; start < changed.length; start += BATCH_ROWS) {
      const events = new EventBatch(how.at, workspaceId, collectionId, how.event, importId);
      for (const record of changed.slice(start, start + BATCH_ROWS)) events.add(eventData(record));
      await events.prepareRows(deps.dialect).write(trx);
    }
  } else {
    // The outbox's ordinary rows, as emitEvents writes them (newEventRow), the data as text already.
    const values: unknown[] = [];
    for (const record of changed) {
      const row = { id: newId('evt', how.at.getTime()), workspace_id: workspaceId, collection_id: collectionId, type: how.event, data: eventData(record), created_at: at };
      for (const column of EVENT_COLUMNS) values.push(row[column]);
    }
    await deps.dialect.prepareRows('events', EVENT_COLUMNS, values).write(trx);
  }
  await announceEvents(trx);
}
