import type { Deps } from '../../deps.js';
import type { CollectionsTable, Executor } from '../../db/schema.js';
import { directQuery } from '../../db/direct-query.js';
import { lockParentRow } from '../../db/parent-row-lock.js';
import { rowLimit } from '../../db/row-limit.js';
import { AppError, conflict, invalidRequest, notFound } from '../../errors.js';
import { hasPrefix, newId } from '../../ids.js';
import { recordAudit, type Actor, type RequestMeta } from '../audit/audit.js';
import { emitEvent } from '../events/outbox.js';
import { matchSearchTriggers } from './search-triggers.js';
import { checkedSearchFields, searchView, storedSearchFields, type SearchView } from './search-settings.js';
import { publicSubmissions, storedSubmissions, submissionsToStore, type PublicSubmissions, type SubmissionsInput } from './submission-settings.js';

export const COLLECTION_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** What a collection's settings hold, as answers show them. Unknown keys are refused by the route schema. */
export interface CollectionSettings {
  description: string;
  /** Public submissions (submission-settings.ts), without the CAPTCHA secret. */
  submissions?: PublicSubmissions;
  /** The data paths full-text search looks in (search-settings.ts). */
  searchFields?: string[];
}

/** What a create or an update may send as settings. */
export interface SettingsInput {
  description?: string;
  submissions?: SubmissionsInput;
  /** null or [] turns search off. */
  searchFields?: string[] | null;
}

/** The settings as stored: the CAPTCHA secret included. Only the submission gate reads it. */
export function storedSettings(row: Pick<CollectionsTable, 'settings'>): Record<string, unknown> {
  const parsed: unknown = JSON.parse(row.settings);
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
}

/** The settings to store from what was sent and what was stored (a shallow merge; submissions replace as a whole). */
function settingsToStore(input: SettingsInput | undefined, before: Record<string, unknown>): string {
  const settings: Record<string, unknown> = { description: '', ...before };
  if (input?.description !== undefined) settings.description = input.description;
  if (input?.submissions !== undefined) settings.submissions = submissionsToStore(input.submissions, storedSubmissions(before));
  if (input?.searchFields !== undefined) {
    const fields = checkedSearchFields(input.searchFields);
    if (fields) settings.searchFields = fields;
    else delete settings.searchFields;
  }
  return JSON.stringify(settings);
}

export interface CollectionView {
  id: string;
  name: string;
  public: boolean;
  settings: CollectionSettings;
  activeSchemaVersion: number | null;
  /** Only with settings.searchFields: whether its index is built, or how far. */
  search?: SearchView;
  createdAt: string;
  updatedAt: string;
  trashedAt: string | null;
}

export interface CollectionContext {
  workspaceId: string;
  actor: Actor;
  meta: RequestMeta;
}

export function toCollectionView(row: CollectionsTable): CollectionView {
  const settings = settingsView(storedSettings(row));
  const search = searchView(row, settings.searchFields ?? null);
  return {
    id: row.id,
    name: row.name,
    public: Boolean(row.public),
    settings,
    activeSchemaVersion: row.active_schema_version,
    ...(search ? { search } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    trashedAt: row.trashed_at,
  };
}

/** Settings as answers and events show them: known keys only, the CAPTCHA secret never. */
function settingsView(stored: Record<string, unknown>): CollectionSettings {
  const view: CollectionSettings = { description: typeof stored.description === 'string' ? stored.description : '' };
  const submissions = storedSubmissions(stored);
  if (submissions) view.submissions = publicSubmissions(submissions);
  const searchFields = storedSearchFields(stored);
  if (searchFields) view.searchFields = searchFields;
  return view;
}

/** The event payload of collection events (docs/design.md §7). */
const eventData = (view: CollectionView) => ({
  collection: { id: view.id, name: view.name, public: view.public, settings: view.settings },
});

/**
 * A collection by id, and by name: every record read starts with one of these, so they take the
 * direct path (db/direct-query.ts) instead of building and compiling a Kysely query each time.
 */
const COLLECTION_COLUMNS = 'id, workspace_id, name, public, settings, active_schema_version, search_build, created_at, updated_at, trashed_at';
const collectionById = directQuery<CollectionsTable>('plainbase_collection_by_id', (parameter) =>
  `select ${COLLECTION_COLUMNS} from collections where workspace_id = ${parameter(1)} and id = ${parameter(2)}`);
const collectionByName = directQuery<CollectionsTable>('plainbase_collection_by_name', (parameter) =>
  `select ${COLLECTION_COLUMNS} from collections where workspace_id = ${parameter(1)} and name = ${parameter(2)}`);

/** Finds a collection of the workspace by id or name; trashed ones only when asked for. */
export async function findCollection(
  executor: Executor,
  workspaceId: string,
  idOrName: string,
  options: { includeTrashed?: boolean } = {},
): Promise<CollectionsTable> {
  const [row] = await (hasPrefix(idOrName, 'col') ? collectionById : collectionByName).run(executor, [workspaceId, idOrName]);
  if (!row) throw notFound('collection');
  if (row.trashed_at !== null && !options.includeTrashed) throw collectionInTrash(row.name);
  return row;
}

/** The id of the workspace's collection named by id or name, trashed or not; null when there is none. */
export async function findCollectionId(executor: Executor, workspaceId: string, idOrName: string): Promise<string | null> {
  const row = await executor
    .selectFrom('collections')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where(hasPrefix(idOrName, 'col') ? 'id' : 'name', '=', idOrName)
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * A public collection that is not in the trash, by its id (in any workspace: ids are unique) or
 * by its name within the given workspace; null when there is none such.
 */
export async function findPublicCollection(
  executor: Executor,
  ref: { id: string } | { workspaceId: string; name: string },
): Promise<{ workspaceId: string; id: string } | null> {
  let query = executor.selectFrom('collections').select(['id', 'workspace_id']).where('public', '=', 1).where('trashed_at', 'is', null);
  query = 'id' in ref ? query.where('id', '=', ref.id) : query.where('workspace_id', '=', ref.workspaceId).where('name', '=', ref.name);
  const row = await query.executeTakeFirst();
  return row ? { workspaceId: row.workspace_id, id: row.id } : null;
}

/** The refusal of a collection in the trash, for findCollection and reads that look it up themselves. */
export const collectionInTrash = (name: string): AppError =>
  new AppError('NOT_FOUND', `The collection ${name} is in the trash; restore it to reach its records.`, { trashed: true });

export async function listCollections(
  executor: Executor,
  workspaceId: string,
  options: { trashed: boolean; limit: number; after?: string; newestFirst?: boolean; onlyIds?: string[] },
): Promise<CollectionView[]> {
  let query = executor
    .selectFrom('collections')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('trashed_at', options.trashed ? 'is not' : 'is', null);
  // `after` is the last id of the previous page, in the order asked for.
  if (options.after) query = query.where('id', options.newestFirst ? '<' : '>', options.after);
  if (options.onlyIds) query = query.where('id', 'in', options.onlyIds.length ? options.onlyIds : ['']);
  const rows = await query.orderBy('id', options.newestFirst ? 'desc' : 'asc').limit(rowLimit(options.limit)).execute();
  return rows.map(toCollectionView);
}

export async function createCollection(
  deps: Deps,
  context: CollectionContext,
  input: { name: string; public?: boolean; settings?: SettingsInput },
): Promise<CollectionView> {
  const now = deps.clock.now();
  const row: CollectionsTable = {
    id: newId('col', now.getTime()),
    workspace_id: context.workspaceId,
    name: input.name,
    public: input.public ? 1 : 0,
    settings: settingsToStore(input.settings, {}),
    active_schema_version: null,
    // A new collection has no records to index.
    search_build: null,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    trashed_at: null,
  };
  assertNameAllowed(input.name);
  const view = toCollectionView(row);
  await deps.db.transaction().execute(async (trx) => {
    await checkRoomForCollection(deps, trx, context.workspaceId);
    await assertNameFree(trx, context.workspaceId, input.name);
    await trx.insertInto('collections').values(row).execute();
    if (view.settings.searchFields) await matchSearchTriggers(trx, deps.dialect);
    await emitEvent(trx, now, { workspaceId: context.workspaceId, collectionId: row.id, type: 'collection.created', data: eventData(view) });
    await recordAudit(trx, now, context.meta, { workspaceId: context.workspaceId, actor: context.actor, action: 'collection.created', target: { type: 'collection', id: row.id }, details: { name: row.name } });
  });
  return view;
}

/**
 * A workspace holds at most `collectionsPerWorkspace` collections. Those in the trash count: they
 * keep their records and files and can be restored at any time, so only deleting one for good
 * frees room (and a restore never has to be refused). Concurrent creates are counted one after
 * the other (lockParentRow on the workspace).
 */
async function checkRoomForCollection(deps: Deps, trx: Executor, workspaceId: string): Promise<void> {
  await lockParentRow(trx, 'workspaces', workspaceId);
  const { count } = await trx
    .selectFrom('collections')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  const limit = deps.config.collectionsPerWorkspace;
  if (Number(count) >= limit) {
    throw new AppError('CONFLICT', `This workspace already has ${limit} collections, those in the trash included, the most it may hold (PLAINBASE_COLLECTIONS_PER_WORKSPACE). Delete one for good (DELETE …?permanent=true) first.`, { limit });
  }
}

/** `{col}` in a path is an id when it begins with col_, so such a name could never be reached by name. */
function assertNameAllowed(name: string): void {
  if (!COLLECTION_NAME.test(name) || hasPrefix(name, 'col')) {
    throw invalidRequest(`A collection name is lower case letters, digits and _, starting with a letter, and cannot begin with col_ (that reads as an id); ${JSON.stringify(name)} is not one.`, { field: 'body.name' });
  }
}

async function assertNameFree(executor: Executor, workspaceId: string, name: string): Promise<void> {
  const taken = await executor.selectFrom('collections').select(['id', 'trashed_at']).where('workspace_id', '=', workspaceId).where('name', '=', name).executeTakeFirst();
  if (taken) {
    throw conflict(
      taken.trashed_at ? `The name ${name} is taken by a collection in the trash; restore it or delete it for good.` : `A collection named ${name} already exists.`,
      { field: 'body.name' },
    );
  }
}

export async function updateCollection(
  deps: Deps,
  context: CollectionContext,
  idOrName: string,
  input: { name?: string; public?: boolean; settings?: SettingsInput },
): Promise<CollectionView> {
  const now = deps.clock.now();
  if (input.name !== undefined) assertNameAllowed(input.name);
  return deps.db.transaction().execute(async (trx) => {
    const current = await findCollection(trx, context.workspaceId, idOrName);
    if (input.name !== undefined && input.name !== current.name) await assertNameFree(trx, context.workspaceId, input.name);
    const settings = settingsToStore(input.settings, storedSettings(current));
    const switchesSearch = searchTurnsOnOrOff(current.settings, settings);
    const changes = {
      name: input.name ?? current.name,
      public: input.public === undefined ? current.public : input.public ? 1 : 0,
      settings,
      search_build: await searchBuildAfter(trx, current, settings),
      updated_at: now.toISOString(),
    };
    await trx.updateTable('collections').set(changes).where('id', '=', current.id).execute();
    // After the row's update: a record write into the collection only shares the row's key, and an
    // index build on it, which locks the row first, goes first.
    if (switchesSearch) await matchSearchTriggers(trx, deps.dialect);
    const view = toCollectionView({ ...current, ...changes });
    await emitEvent(trx, now, { workspaceId: context.workspaceId, collectionId: current.id, type: 'collection.updated', data: eventData(view) });
    await recordAudit(trx, now, context.meta, {
      workspaceId: context.workspaceId,
      actor: context.actor,
      action: 'collection.updated',
      target: { type: 'collection', id: current.id },
      details: { changed: Object.keys(input) },
    });
    return view;
  });
}

/**
 * Where the search index stands once the settings are `settings`: unchanged while the searched
 * paths are, otherwise to be rebuilt (or, without paths, emptied) from the first record in the
 * background (modules/search/search-builds.ts), from now on with the new paths for every record
 * written (the triggers read them from the settings).
 */
async function searchBuildAfter(trx: Executor, current: CollectionsTable, settings: string): Promise<string | null> {
  const before = storedSearchFields(storedSettings(current));
  const after = storedSearchFields(storedSettings({ settings }));
  if (JSON.stringify(before) === JSON.stringify(after)) return current.search_build;
  const { count } = await trx
    .selectFrom('records')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
    .where('workspace_id', '=', current.workspace_id)
    .where('collection_id', '=', current.id)
    .executeTakeFirstOrThrow();
  return Number(count) === 0 ? null : JSON.stringify({ indexed: 0, total: Number(count), after: null });
}

/** Whether the collection searches with one settings and not the other (search-triggers.ts). */
function searchTurnsOnOrOff(before: string, after: string): boolean {
  return (storedSearchFields(storedSettings({ settings: before })) === null) !== (storedSearchFields(storedSettings({ settings: after })) === null);
}

/** To the trash: the collection and its records become unreachable; the name stays taken. */
export async function trashCollection(deps: Deps, context: CollectionContext, idOrName: string): Promise<CollectionView> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const current = await findCollection(trx, context.workspaceId, idOrName, { includeTrashed: true });
    if (current.trashed_at) throw conflict('The collection is already in the trash.');
    await trx.updateTable('collections').set({ trashed_at: now.toISOString() }).where('id', '=', current.id).execute();
    const view = toCollectionView({ ...current, trashed_at: now.toISOString() });
    await emitEvent(trx, now, { workspaceId: context.workspaceId, collectionId: current.id, type: 'collection.deleted', data: eventData(view) });
    await recordAudit(trx, now, context.meta, { workspaceId: context.workspaceId, actor: context.actor, action: 'collection.trashed', target: { type: 'collection', id: current.id } });
    return view;
  });
}

export async function restoreCollection(deps: Deps, context: CollectionContext, idOrName: string): Promise<CollectionView> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const current = await findCollection(trx, context.workspaceId, idOrName, { includeTrashed: true });
    if (!current.trashed_at) throw conflict('The collection is not in the trash.');
    await trx.updateTable('collections').set({ trashed_at: null }).where('id', '=', current.id).execute();
    const view = toCollectionView({ ...current, trashed_at: null });
    await emitEvent(trx, now, { workspaceId: context.workspaceId, collectionId: current.id, type: 'collection.restored', data: eventData(view) });
    await recordAudit(trx, now, context.meta, { workspaceId: context.workspaceId, actor: context.actor, action: 'collection.restored', target: { type: 'collection', id: current.id } });
    return view;
  });
}
