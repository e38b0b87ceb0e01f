import type { Deps } from '../../deps.js';
import { lockParentRow } from '../../db/parent-row-lock.js';
import { rowLimit } from '../../db/row-limit.js';
import type { CollectionsTable, Executor, SchemaVersionsTable } from '../../db/schema.js';
import { AppError, conflict, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { recordAudit } from '../audit/audit.js';
import { findCollection, type CollectionContext } from '../collections/collections.js';
import { emitEvents, type NewEvent } from '../events/outbox.js';
import { checkSchema, describeErrors, validatorFor } from './compile-schema.js';

export type SchemaState = 'draft' | 'active' | 'off';

export interface SchemaVersionView {
  id: string;
  collectionId: string;
  version: number;
  state: SchemaState;
  schema: Record<string, unknown>;
  createdAt: string;
}

const toView = (row: SchemaVersionsTable): SchemaVersionView => ({
  id: row.id,
  collectionId: row.collection_id,
  version: row.version,
  state: row.state as SchemaState,
  schema: JSON.parse(row.schema) as Record<string, unknown>,
  createdAt: row.created_at,
});

/** Up to `limit` versions, newest first, older than version `before`. */
export async function listSchemaVersions(executor: Executor, workspaceId: string, idOrName: string, page: { limit: number; before?: number }): Promise<SchemaVersionView[]> {
  const collection = await findCollection(executor, workspaceId, idOrName);
  let query = executor.selectFrom('schema_versions').selectAll().where('workspace_id', '=', workspaceId).where('collection_id', '=', collection.id);
  if (page.before !== undefined) query = query.where('version', '<', page.before);
  const rows = await query.orderBy('version', 'desc').limit(rowLimit(page.limit)).execute();
  return rows.map(toView);
}

export async function getSchemaVersion(executor: Executor, workspaceId: string, idOrName: string, version: number): Promise<SchemaVersionView> {
  const collection = await findCollection(executor, workspaceId, idOrName);
  return toView(await findVersion(executor, collection.id, version));
}

async function findVersion(executor: Executor, collectionId: string, version: number): Promise<SchemaVersionsTable> {
  const row = await executor.selectFrom('schema_versions').selectAll().where('collection_id', '=', collectionId).where('version', '=', version).executeTakeFirst();
  if (!row) throw notFound('schema version');
  return row;
}

/** A new version, numbered after the last, created as a draft: nothing is enforced until activated. */
export async function createSchemaVersion(deps: Deps, context: CollectionContext, idOrName: string, schema: Record<string, unknown>): Promise<SchemaVersionView> {
  checkSchema(schema);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const collection = await findCollection(trx, context.workspaceId, idOrName);
    // Concurrent creates on the collection count (and number) one after the other.
    await lockParentRow(trx, 'collections', collection.id);
    const last = await trx
      .selectFrom('schema_versions')
      .select((eb) => [eb.fn.max('version').as('version'), eb.fn.countAll<number | string | bigint>().as('count')])
      .where('collection_id', '=', collection.id)
      .executeTakeFirst();
    // No version is ever deleted (only with the whole collection), so this counts over the collection's life.
    const limit = deps.config.schemaVersionsPerCollection;
    if (Number(last?.count ?? 0) >= limit) {
      throw new AppError('CONFLICT', `The collection ${collection.name} already has ${limit} schema versions, the most it may hold (PLAINBASE_SCHEMA_VERSIONS_PER_COLLECTION). Versions are kept for good: activate one of them again, or ask the operator to raise the setting.`, { limit });
    }
    const row: SchemaVersionsTable = {
      id: newId('sch', now.getTime()),
      workspace_id: context.workspaceId,
      collection_id: collection.id,
      version: Number(last?.version ?? 0) + 1,
      state: 'draft',
      schema: JSON.stringify(schema),
      created_at: now.toISOString(),
    };
    // The unique (collection, version) index makes a concurrent create fail as CONFLICT, never a duplicate.
    await trx.insertInto('schema_versions').values(row).execute();
    await recordAudit(trx, now, context.meta, { workspaceId: context.workspaceId, actor: context.actor, action: 'schema.created', target: { type: 'schema', id: row.id }, details: { collectionId: collection.id, version: row.version } });
    return toView(row);
  });
}

const schemaEvent = (collection: CollectionsTable, row: SchemaVersionsTable, state: 'active' | 'off'): NewEvent => ({
  workspaceId: collection.workspace_id,
  collectionId: collection.id,
  type: 'schema.updated',
  data: { schema: { id: row.id, version: row.version, state } },
});

/** Activates a version; the one active before goes off. Each change emits schema.updated. */
export async function activateSchemaVersion(deps: Deps, context: CollectionContext, idOrName: string, version: number): Promise<SchemaVersionView> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const collection = await findCollection(trx, context.workspaceId, idOrName);
    const target = await findVersion(trx, collection.id, version);
    if (target.state === 'active') return toView(target);
    // Refused before anything changes when the version cannot check records (validatorFor).
    validatorFor(target.id, JSON.parse(target.schema) as Record<string, unknown>);
    const events: NewEvent[] = [];
    if (collection.active_schema_version !== null) {
      const previous = await findVersion(trx, collection.id, collection.active_schema_version);
      await trx.updateTable('schema_versions').set({ state: 'off' }).where('id', '=', previous.id).execute();
      events.push(schemaEvent(collection, previous, 'off'));
    }
    await trx.updateTable('schema_versions').set({ state: 'active' }).where('id', '=', target.id).execute();
    await trx.updateTable('collections').set({ active_schema_version: version, updated_at: now.toISOString() }).where('id', '=', collection.id).execute();
    events.push(schemaEvent(collection, target, 'active'));
    await emitEvents(trx, now, events);
    await recordAudit(trx, now, context.meta, { workspaceId: context.workspaceId, actor: context.actor, action: 'schema.activated', target: { type: 'schema', id: target.id }, details: { collectionId: collection.id, version } });
    return toView({ ...target, state: 'active' });
  });
}

/** Switches the active version off: from then on no schema is enforced. */
export async function deactivateSchemaVersion(deps: Deps, context: CollectionContext, idOrName: string, version: number): Promise<SchemaVersionView> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const collection = await findCollection(trx, context.workspaceId, idOrName);
    const target = await findVersion(trx, collection.id, version);
    if (target.state !== 'active') throw conflict(`Version ${version} is not the active version.`);
    await trx.updateTable('schema_versions').set({ state: 'off' }).where('id', '=', target.id).execute();
    await trx.updateTable('collections').set({ active_schema_version: null, updated_at: now.toISOString() }).where('id', '=', collection.id).execute();
    await emitEvents(trx, now, [schemaEvent(collection, target, 'off')]);
    await recordAudit(trx, now, context.meta, { workspaceId: context.workspaceId, actor: context.actor, action: 'schema.deactivated', target: { type: 'schema', id: target.id }, details: { collectionId: collection.id, version } });
    return toView({ ...target, state: 'off' });
  });
}

type RecordCheck = (data: unknown) => number | null;

/**
 * Checkers by collection id and version number. A version's schema never changes once created
 * and a collection id is never reused, so a checker stays right in every process; which version
 * applies is read from the collection row on each write. Bounded like the validators behind it.
 */
const checkers = new Map<string, RecordCheck>();
const MAX_CHECKERS = 1000;

/**
 * A checker for record data under the collection's active version (or none): returns the
 * version number to store with the record, or throws 422 listing each failing field. Only the
 * first write under a version reads it from the database.
 */
export async function recordChecker(executor: Executor, collection: CollectionsTable): Promise<RecordCheck> {
  const version = collection.active_schema_version;
  if (version === null) return () => null;
  const cacheKey = `${collection.id}/${version}`;
  const cached = checkers.get(cacheKey);
  if (cached) return cached;
  const row = await findVersion(executor, collection.id, version);
  const validate = validatorFor(row.id, JSON.parse(row.schema) as Record<string, unknown>);
  const check: RecordCheck = (data) => {
    if (validate(data)) return version;
    const errors = describeErrors(validate.errors);
    throw new AppError('SCHEMA_VALIDATION_FAILED', `The record does not match schema version ${version}: ${errors[0]?.field} ${errors[0]?.message}.`, { version, errors });
  };
  if (checkers.size >= MAX_CHECKERS) checkers.delete(checkers.keys().next().value!);
  checkers.set(cacheKey, check);
  return check;
}

/**
 * The JSON Schema records of the collection are checked against now, or null without an active
 * version: what a form's text is converted by (http/form-submission.ts). The create checks again
 * in its own transaction, so a version switched in between still decides.
 */
export async function activeSchemaOf(executor: Executor, workspaceId: string, collectionId: string): Promise<unknown> {
  const row = await executor
    .selectFrom('schema_versions')
    .innerJoin('collections', 'collections.id', 'schema_versions.collection_id')
    .select('schema_versions.schema')
    .where('collections.workspace_id', '=', workspaceId)
    .where('collections.id', '=', collectionId)
    .whereRef('schema_versions.version', '=', 'collections.active_schema_version')
    .executeTakeFirst();
  return row ? (JSON.parse(row.schema) as unknown) : null;
}
