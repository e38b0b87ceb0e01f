import { boundCondition } from '../../db/bound-condition.js';
import type { CollectionsTable } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { fastPathOn } from '../../db/fast-paths.js';
import { LruMap } from '../../lru-map.js';

/**
 * The collection this process last found under each reference (workspace and id or name), for
 * statements that would otherwise look it up first: where each statement is a round trip
 * (Dialect.statementsRoundTrip), a create and a list skip that one.
 *
 * A remembered collection is a guess, never an answer. A statement that relies on one carries
 * rememberedGuard, so it does its work only if the collection is still the same (same id and
 * name, not in the trash, same active schema version) at the moment it runs; when it is not, the
 * caller looks the collection up again and answers what is true now (404, in the trash, a schema
 * error). So nothing has to forget a collection when it changes, in this process or another.
 */

const REMEMBERED = 1000;

declare module '../../services.js' {
  interface Services {
    /** Collections last found under an id or name, per workspace (a guess each statement checks). */
    rememberedCollections: LruMap<string, CollectionsTable>;
  }
}

export const noRememberedCollections = (): LruMap<string, CollectionsTable> => new LruMap(REMEMBERED);

const keyOf = (workspaceId: string, idOrName: string) => `${workspaceId}\n${idOrName}`;

/** Remembers the collection found under the reference, where statements are round trips. */
export function rememberCollection(deps: Pick<Deps, 'dialect' | 'services'>, workspaceId: string, idOrName: string, collection: CollectionsTable): void {
  if (!deps.dialect.statementsRoundTrip) return;
  deps.services.rememberedCollections.set(keyOf(workspaceId, idOrName), collection);
}

/** The collection last found under the reference, if any: to be checked with rememberedGuard. */
export const rememberedCollection = (deps: Pick<Deps, 'services'>, workspaceId: string, idOrName: string): CollectionsTable | undefined =>
  fastPathOn('remembered-collection') ? deps.services.rememberedCollections.get(keyOf(workspaceId, idOrName)) : undefined;

/** The values of rememberedGuard's four parameters, in order. */
export const rememberedGuardValues = (collection: CollectionsTable): unknown[] =>
  [collection.workspace_id, collection.id, collection.name, collection.active_schema_version ?? 0];

/**
 * A select of one row while the collection is still as remembered, none otherwise; its
 * parameters are `first` to `first + 3` (rememberedGuardValues). Versions count from 1, so 0
 * stands for none.
 */
export const rememberedGuard = (parameter: (position: number) => string, first = 1): string => `select 1 from collections
  where workspace_id = ${parameter(first)} and id = ${parameter(first + 1)} and name = ${parameter(first + 2)} and trashed_at is null
  and coalesce(active_schema_version, 0) = ${parameter(first + 3)}`;

/** rememberedGuard as a condition for Kysely's builder, the values bound: made from the same text. */
export const rememberedGuardCondition = boundCondition((parameter) => `exists (${rememberedGuard(parameter, 0)})`, rememberedGuardValues).condition;
