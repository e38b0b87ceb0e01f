import type { Deps } from '../../deps.js';
import { parseSearchBuild, type SearchBuild } from '../collections/search-settings.js';

/**
 * Builds search indexes in the background: when a collection's settings.searchFields change,
 * collections.search_build says so (collections.ts), and this walks the collection's records in
 * id order, a batch per transaction, rewriting each one's search row from the paths as they are
 * (Dialect.searchReindex) and saving how far it got. Records written meanwhile are indexed by the
 * triggers of migration 0020, so when the walk ends every record is. A build interrupted (the
 * process stopped) goes on from where it was saved when the app starts again; two processes may
 * walk the same collection at once, which does each batch twice but no harm (the progress saved is
 * conditional on the one read). Until a build ends, ?search= on the collection answers 409.
 */

export interface SearchBuilds {
  running: Promise<void> | null;
  /** Asked again while running: look for waiting builds once more when done. */
  again: boolean;
  stopped: boolean;
}

declare module '../../services.js' {
  interface Services {
    searchBuilds: SearchBuilds;
  }
}

export const noSearchBuilds = (): SearchBuilds => ({ running: null, again: false, stopped: false });

/** Records per batch: one transaction each, short enough not to hold writers back long. */
export const SEARCH_BATCH = 500;

type BuildDeps = Pick<Deps, 'db' | 'dialect' | 'services'>;

/** Starts building every waiting index in the background (if not running already); errors go to `log`. */
export function startSearchBuilds(deps: BuildDeps, log: (error: unknown) => void = () => undefined): void {
  const state = deps.services.searchBuilds;
  if (state.stopped) return;
  if (state.running) {
    state.again = true;
    return;
  }
  state.running = (async () => {
    do {
      state.again = false;
      await buildWaitingSearchIndexes(deps, () => state.stopped);
    } while (state.again && !state.stopped);
  })()
    .catch(log)
    .finally(() => {
      state.running = null;
    });
}

/** Stops the background builds (at the end of a batch) and waits for them. */
export async function stopSearchBuilds(deps: BuildDeps): Promise<void> {
  const state = deps.services.searchBuilds;
  state.stopped = true;
  await state.running;
}

/** Builds every waiting index, batch by batch, until none waits or `stop` says so. */
export async function buildWaitingSearchIndexes(deps: BuildDeps, stop: () => boolean = () => false): Promise<void> {
  for (;;) {
    if (stop()) return;
    const next = await deps.db.selectFrom('collections').select('id').where('search_build', 'is not', null).orderBy('id').limit(1).executeTakeFirst();
    if (!next) return;
    while (!stop() && (await buildBatch(deps, next.id))) {
      // Each batch is its own transaction.
    }
  }
}

/** One batch of the collection's build; false once the build is done (or gone). */
async function buildBatch(deps: BuildDeps, collectionId: string): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('collections').select(['settings', 'search_build']).where('id', '=', collectionId).executeTakeFirst();
    const build = row ? parseSearchBuild(row.search_build) : null;
    if (!row || !build) return false;
    const after = build.after ?? '';
    const ids = await trx.selectFrom('records').select('id').where('collection_id', '=', collectionId).where('id', '>', after).orderBy('id').limit(SEARCH_BATCH).execute();
    const last = ids[ids.length - 1]?.id;
    let next: SearchBuild | null = null;
    if (last !== undefined) {
      for (const statement of deps.dialect.searchReindex({ collectionId, after, last })) await statement.execute(trx);
      next = { indexed: build.indexed + ids.length, total: build.total, after: last };
      if (ids.length < SEARCH_BATCH) next = null;
    }
    // Saved only if nobody changed it meanwhile (new settings start a new build; another process may have advanced it).
    const saved = await trx
      .updateTable('collections')
      .set({ search_build: next === null ? null : JSON.stringify(next) })
      .where('id', '=', collectionId)
      .where('search_build', '=', row.search_build)
      .executeTakeFirst();
    return next !== null && Number(saved.numUpdatedRows) === 1;
  });
}
