import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { dialectOf } from '../../db/dialect.js';
import { insertRows } from '../../db/insert-rows.js';
import type { Executor, RecordVersionsTable } from '../../db/schema.js';
import { invalidRequest } from '../../errors.js';
import { newId } from '../../ids.js';
import { recordAudit, type ActorType } from '../audit/audit.js';
import { findCollection, type CollectionContext } from '../collections/collections.js';
import { announceEvents, EVENT_COLUMNS, type EventType } from '../events/outbox.js';
import { VERSION_COLUMNS, type VersionChange } from '../history/record-versions.js';

/**
 * Undoing what one caller did (docs/history.md, "Undo what one caller did"): every record of the
 * workspace that the actor changed in [since, until) goes back to the state it was in before the
 * actor's first change in that window, i.e. its version (first revision - 1).
 *
 * - The actor created it: it goes to the trash.
 * - Before, it was in the trash: it goes (back) to the trash with that data.
 * - Otherwise its data and schema version as they were are put back: out of the trash if the
 *   actor trashed it (`restored`), else as a new revision (`reverted`).
 * A record changed after the actor's first change by anyone else, or by the actor after the
 * window, is left alone and listed as a conflict, as is one whose earlier version is no longer
 * kept. Data put back is the record's own past, stored as it was with that version's schema
 * version, as a restore from the trash does: it is not checked against today's active schema.
 *
 * Work goes in batches of BATCH records, one short transaction each; a record's update carries the
 * revision read, so a writer that got in between wins and the record becomes a conflict.
 */

export type RevertActorType = Extract<ActorType, 'key' | 'person' | 'service_account' | 'anonymous'>;

export interface RevertInput {
  actor: { type: RevertActorType; id: string | null };
  since: string;
  until?: string;
  collections?: readonly string[];
  dryRun?: boolean;
}

export type RevertConflictReason = 'changed_by_other' | 'changed_after_window' | 'history_gone' | 'collection_in_trash';

export interface RevertConflict {
  recordId: string;
  collectionId: string;
  reason: RevertConflictReason;
}

export interface RevertResult {
  reverted: number;
  trashed: number;
  restored: number;
  conflicts: RevertConflict[];
  dryRun: boolean;
}

/** Records per transaction (and per query that reads what to do with them). */
export const REVERT_BATCH = 1000;
/** Conflicts listed in one answer at most; further ones are counted in the audit entry only. */
export const MAX_LISTED_CONFLICTS = 10_000;
/** Collections one revert may be limited to. */
export const MAX_REVERT_COLLECTIONS = 100;

/** A time as stored (UTC, milliseconds), or a 400 naming the field. */
function instant(value: string, field: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalidRequest(`${field} is not a time this service can compare.`, { field });
  return new Date(ms).toISOString();
}

/** What one record of a batch is, as the batch query reads it. */
interface Candidate {
  record_id: string;
  collection_id: string;
  first_revision: number | string;
  first_change: string;
  revision: number | string;
  data: unknown;
  schema_version: number | string | null;
  trashed_at: string | null;
  prev_revision: number | string | null;
  prev_data: unknown;
  prev_schema_version: number | string | null;
  prev_change: string | null;
  same_data: number | string | boolean;
  changed_by_other: number | string | boolean;
  changed_after: number | string | boolean;
  collection_trashed: number | string | boolean;
}

/** What the revert does to one record. */
interface Plan {
  recordId: string;
  collectionId: string;
  /** The revision read: the update holds only if the record is still at it. */
  revision: number;
  dataJson: string;
  schemaVersion: number | null;
  trashed: boolean;
  /** Whether data and schema version change (updated_at moves only then). */
  dataChanges: boolean;
  change: Extract<VersionChange, 'reverted' | 'trashed' | 'restored'>;
  event: EventType;
  counted: 'reverted' | 'trashed' | 'restored';
}

const truthy = (value: number | string | boolean): boolean => value === true || Number(value) === 1;
const numberOrNull = (value: number | string | null): number | null => (value === null ? null : Number(value));

export async function revertActor(deps: Deps, context: CollectionContext, input: RevertInput): Promise<RevertResult> {
  const now = deps.clock.now();
  const since = instant(input.since, 'body.since');
  // Without until, everything up to the request, its own millisecond included.
  const until = input.until === undefined ? new Date(now.getTime() + 1).toISOString() : instant(input.until, 'body.until');
  if (since >= until) throw invalidRequest('since must be before until (until defaults to now).', { field: 'body.since' });
  if (input.actor.type === 'anonymous' && input.actor.id !== null) {
    throw invalidRequest('Public submissions carry no actor id: send actor.id null for type anonymous.', { field: 'body.actor.id' });
  }
  if (input.actor.type !== 'anonymous' && input.actor.id === null) throw invalidRequest('actor.id is needed for this actor type.', { field: 'body.actor.id' });
  const refs = [...new Set(input.collections ?? [])];
  if (refs.length > MAX_REVERT_COLLECTIONS) throw invalidRequest(`At most ${MAX_REVERT_COLLECTIONS} collections.`, { field: 'body.collections', limit: MAX_REVERT_COLLECTIONS });
  const collectionIds: string[] = [];
  for (const ref of refs) collectionIds.push((await findCollection(deps.db, context.workspaceId, ref, { includeTrashed: true })).id);
  const dryRun = input.dryRun === true;
  const scope: Scope = { workspaceId: context.workspaceId, actorType: input.actor.type, actorId: input.actor.id, since, until, collectionIds: input.collections === undefined ? null : collectionIds };

  const result: RevertResult = { reverted: 0, trashed: 0, restored: 0, conflicts: [], dryRun };
  let conflictCount = 0;
  const conflict = (found: RevertConflict) => {
    conflictCount += 1;
    if (result.conflicts.length < MAX_LISTED_CONFLICTS) result.conflicts.push(found);
  };
  // An empty collections list limits the revert to nothing.
  const recordIds = scope.collectionIds?.length === 0 ? [] : await changedRecordIds(deps.db, scope);
  for (let start = 0; start < recordIds.length; start += REVERT_BATCH) {
    const batch = recordIds.slice(start, start + REVERT_BATCH);
    const candidates = await readCandidates(deps.db, scope, batch);
    const plans: Plan[] = [];
    for (const candidate of candidates) {
      const outcome = planFor(deps, candidate);
      if (outcome === null) continue;
      if ('reason' in outcome) conflict(outcome);
      else plans.push(outcome);
    }
    if (dryRun) {
      for (const plan of plans) result[plan.counted] += 1;
      continue;
    }
    if (plans.length === 0) continue;
    const { done, lost } = await deps.db.transaction().execute((trx) => applyPlans(trx, context, plans, now));
    for (const plan of done) result[plan.counted] += 1;
    for (const plan of lost) conflict({ recordId: plan.recordId, collectionId: plan.collectionId, reason: 'changed_by_other' });
  }
  if (!dryRun) {
    await recordAudit(deps.db, now, context.meta, {
      workspaceId: context.workspaceId,
      actor: context.actor,
      action: 'history.reverted',
      target: null,
      details: {
        actor: input.actor,
        since,
        until,
        ...(scope.collectionIds === null ? {} : { collections: scope.collectionIds }),
        reverted: result.reverted,
        trashed: result.trashed,
        restored: result.restored,
        conflicts: conflictCount,
      },
    });
  }
  return result;
}

interface Scope {
  workspaceId: string;
  actorType: RevertActorType;
  actorId: string | null;
  since: string;
  until: string;
  collectionIds: string[] | null;
}

/**
 * The actor's versions in the window: record_versions_actor (migration 0018) holds all of it.
 * `byRecord`: the condition of a batch's query, which looks up one record's versions by primary
 * key (workspace, record): each other column is wrapped (`|| ''`) so that neither planner walks
 * the actor's whole window for every record instead (no statistics on a table that just grew).
 */
const actorVersions = (scope: Scope, alias: string, byRecord = false) => {
  const column = (name: string) => (byRecord && name !== 'workspace_id' ? sql`(${sql.ref(`${alias}.${name}`)} || '')` : sql.ref(`${alias}.${name}`));
  return sql.join([
    sql`${column('workspace_id')} = ${scope.workspaceId}`,
    sql`${column('actor_type')} = ${scope.actorType}`,
    scope.actorId === null ? sql`${column('actor_id')} is null` : sql`${column('actor_id')} = ${scope.actorId}`,
    sql`${column('changed_at')} >= ${scope.since}`,
    sql`${column('changed_at')} < ${scope.until}`,
    ...(scope.collectionIds === null ? [] : [sql`${column('collection_id')} in (${sql.join(scope.collectionIds)})`]),
  ], sql` and `);
};

/** Every record the actor changed in the window, in id order: one read of the index. */
async function changedRecordIds(db: Executor, scope: Scope): Promise<string[]> {
  const { rows } = await sql<{ record_id: string }>`
    select distinct v.record_id from record_versions v where ${actorVersions(scope, 'v')} order by v.record_id`.execute(db);
  return rows.map((row) => row.record_id);
}

/**
 * One batch of records, all that decides what to do with each in one query: the actor's first
 * revision in the window and what it was, the record as it is, the version before the first
 * (absent when history no longer keeps it), and whether anyone else, or the actor after the
 * window, changed it since.
 */
async function readCandidates(db: Executor, scope: Scope, recordIds: string[]): Promise<Candidate[]> {
  const ids = sql.join(recordIds);
  const actorIdOrEmpty = scope.actorId ?? '';
  const { rows } = await sql<Candidate>`
    with firsts as materialized (
      select b.id as record_id, (
        select min(v.revision) from record_versions v
        where ${actorVersions(scope, 'v', true)} and v.record_id = b.id
      ) as first_revision
      from records b
      where b.workspace_id = ${scope.workspaceId} and b.id in (${ids})
    )
    select f.record_id, r.collection_id, f.first_revision,
      (select fv.change from record_versions fv where fv.workspace_id = ${scope.workspaceId} and fv.record_id = f.record_id and fv.revision = f.first_revision) as first_change,
      r.revision, r.data, r.schema_version, r.trashed_at,
      p.revision as prev_revision, p.data as prev_data, p.schema_version as prev_schema_version, p.change as prev_change,
      case when p.data = r.data then 1 else 0 end as same_data,
      case when exists (
        select 1 from record_versions o
        where o.workspace_id = ${scope.workspaceId} and o.record_id = f.record_id and o.revision > f.first_revision
          and (o.actor_type <> ${scope.actorType} or coalesce(o.actor_id, '') <> ${actorIdOrEmpty})
      ) then 1 else 0 end as changed_by_other,
      case when exists (
        select 1 from record_versions o
        where o.workspace_id = ${scope.workspaceId} and o.record_id = f.record_id and o.revision > f.first_revision and o.changed_at >= ${scope.until}
      ) then 1 else 0 end as changed_after,
      case when c.trashed_at is null then 0 else 1 end as collection_trashed
    from firsts f
    join records r on r.workspace_id = ${scope.workspaceId} and r.id = f.record_id
    join collections c on c.id = r.collection_id
    -- Every table is reached from the batch's records by primary key: a join on versions could be
    -- walked by workspace alone first, all of the workspace's versions for each batch (both
    -- planners did, without statistics). Materialized: each first revision is looked up once.
    left join record_versions p on p.workspace_id = ${scope.workspaceId} and p.record_id = f.record_id and p.revision = f.first_revision - 1
    where f.first_revision is not null
    order by f.record_id`.execute(db);
  return rows;
}

/** What to do with one record: null for nothing (it is as it was), a conflict, or a plan. */
function planFor(deps: Deps, row: Candidate): Plan | RevertConflict | null {
  const recordId = row.record_id;
  const collectionId = row.collection_id;
  const laterChange = (): RevertConflict | null => {
    if (truthy(row.changed_by_other)) return { recordId, collectionId, reason: 'changed_by_other' };
    if (truthy(row.changed_after)) return { recordId, collectionId, reason: 'changed_after_window' };
    return null;
  };
  const isTrashed = row.trashed_at !== null;
  const currentJson = deps.dialect.jsonText(row.data);
  const currentSchema = numberOrNull(row.schema_version);
  const base = { recordId, collectionId, revision: Number(row.revision) };
  let target: { dataJson: string; schemaVersion: number | null; trashed: boolean; sameData: boolean };
  if (row.first_change === 'created') {
    // Before the actor, the record did not exist: the nearest is the trash, data as it is.
    target = { dataJson: currentJson, schemaVersion: currentSchema, trashed: true, sameData: true };
  } else {
    if (row.prev_revision === null) return laterChange() ?? { recordId, collectionId, reason: 'history_gone' };
    const prevSchema = numberOrNull(row.prev_schema_version);
    const sameData = prevSchema === currentSchema && truthy(row.same_data);
    target = { dataJson: sameData ? currentJson : deps.dialect.jsonText(row.prev_data), schemaVersion: prevSchema, trashed: row.prev_change === 'trashed', sameData };
  }
  // Already as it was (run twice, or put back by hand): nothing to do, whoever wrote since.
  if (target.trashed === isTrashed && target.sameData) return null;
  const later = laterChange();
  if (later) return later;
  if (truthy(row.collection_trashed)) return { recordId, collectionId, reason: 'collection_in_trash' };
  const dataChanges = !target.sameData;
  if (target.trashed && !isTrashed) return { ...base, ...target, dataChanges, change: 'trashed', event: 'record.deleted', counted: 'trashed' };
  if (!target.trashed && isTrashed) return { ...base, ...target, dataChanges, change: 'restored', event: 'record.restored', counted: 'restored' };
  // Same place (both in the trash, or both not), other data.
  return { ...base, ...target, dataChanges, change: 'reverted', event: 'record.updated', counted: 'reverted' };
}

/** `x in (…)` of a list of strings bound as one JSON value (Dialect.jsonArrayTexts), so any length is one parameter. */
function jsonList(executor: Executor, values: readonly string[]) {
  const [before, after] = dialectOf(executor).jsonArrayTexts('\u0000').split('\u0000') as [string, string];
  return sql`${sql.raw(before)}${JSON.stringify(values)}${sql.raw(after)}`;
}

/**
 * Writes one batch's plans in one transaction, a few set-based statements whatever its size:
 * 1. the records are read again, locked where the engine locks rows (SQLite's one connection runs
 *    one transaction at a time): those no longer at the revision read lost a race to another
 *    writer, and are left as they are;
 * 2. the versions of the others, the state each is given, in one multi-row insert;
 * 3. their rows, one update per kind of change (data put back, to the trash, out of it), the
 *    data copied from the versions just written;
 * 4. their events in one multi-row insert.
 */
async function applyPlans(trx: Executor, context: CollectionContext, plans: Plan[], now: Date): Promise<{ done: Plan[]; lost: Plan[] }> {
  const at = now.toISOString();
  const lock = dialectOf(trx).supportsRowLocks ? sql`for update` : sql``;
  const { rows: current } = await sql<{ id: string; revision: number | string }>`
    select id, revision from records
    where workspace_id = ${context.workspaceId} and id in (${jsonList(trx, plans.map((plan) => plan.recordId))}) ${lock}`.execute(trx);
  const revisions = new Map(current.map((row) => [row.id, Number(row.revision)]));
  const held = new Set(plans.filter((plan) => revisions.get(plan.recordId) === plan.revision).map((plan) => plan.recordId));
  const done = plans.filter((plan) => held.has(plan.recordId));
  const lost = plans.filter((plan) => !held.has(plan.recordId));
  if (done.length === 0) return { done, lost };
  const time = now.getTime();
  await insertRows(trx, 'record_versions', VERSION_COLUMNS, done.map((plan): RecordVersionsTable => ({
    workspace_id: context.workspaceId,
    collection_id: plan.collectionId,
    record_id: plan.recordId,
    revision: plan.revision + 1,
    data: plan.dataJson,
    schema_version: plan.schemaVersion,
    change: plan.change,
    changed_at: at,
    actor_type: context.actor.type,
    actor_id: context.actor.id,
    actor_name: context.actor.name,
    request_id: context.meta.requestId,
  })));
  // The data put back is copied from the version just written (revision + 1: SET reads the row
  // as it was), not sent a second time.
  const fromVersion = (column: 'data' | 'schema_version') => sql`(
    select v.${sql.ref(column)} from record_versions v
    where v.workspace_id = records.workspace_id and v.record_id = records.id and v.revision = records.revision + 1)`;
  const trashedAt = { reverted: sql`trashed_at`, trashed: sql`${at}`, restored: sql`null` };
  for (const change of ['reverted', 'trashed', 'restored'] as const) {
    for (const dataChanges of [true, false]) {
      const ids = done.filter((plan) => plan.change === change && plan.dataChanges === dataChanges).map((plan) => plan.recordId);
      if (ids.length === 0) continue;
      const data = dataChanges ? sql`, data = ${fromVersion('data')}, schema_version = ${fromVersion('schema_version')}, updated_at = ${at}` : sql``;
      await sql`
        update records set revision = revision + 1, trashed_at = ${trashedAt[change]}${data}
        where workspace_id = ${context.workspaceId} and id in (${jsonList(trx, ids)})`.execute(trx);
    }
  }
  // The same data as any write's event, {record: {id, data}}, around the data as stored.
  await insertRows(trx, 'events', EVENT_COLUMNS, done.map((plan) => ({
    id: newId('evt', time),
    workspace_id: context.workspaceId,
    collection_id: plan.collectionId,
    type: plan.event,
    data: `{"record":{"id":"${plan.recordId}","data":${plan.dataJson}}}`,
    created_at: at,
  })));
  await announceEvents(trx);
  return { done, lost };
}
