import type { Dialect } from '../../db/dialect.js';
import type { Executor } from '../../db/schema.js';

/**
 * The triggers that keep `record_search` up to date (migration 0020) look up the record's
 * collection for every record written, searched or not (on PostgreSQL a function call per row): a
 * quarter to a half more time for a bulk insert (docs/queries.md). So they run only while some collection of the database,
 * in any workspace, in the trash or not, has settings.searchFields: the transaction that gives
 * the first collection searchFields turns them on, the one that takes the last one's away (or
 * deletes it for good) turns them off, each before it commits. Records written after it see both
 * the settings and the triggers as it left them; the index of records written before is the
 * background build's (search-builds.ts), which does not need the triggers.
 *
 * Two such transactions at once (two workspaces, or two processes) decide one after the other
 * (Dialect.searchTriggersLock), and the later one sees what the earlier one committed: the last
 * to commit leaves the triggers as the collections say. On PostgreSQL the switch waits for the
 * record writes in flight and holds new ones back until the transaction commits; it happens only
 * when search goes from no collection to one, or from one to none.
 */
export async function matchSearchTriggers(trx: Executor, dialect: SwitchingDialect): Promise<void> {
  await holdSearchTriggers(trx, dialect);
  const wanted = await someCollectionSearches(trx);
  const { rows } = await dialect.searchTriggersRunning.execute(trx);
  const running = Number(rows[0]?.running ?? 0) > 0;
  if (running === wanted) return;
  for (const statement of dialect.switchSearchTriggers(wanted)) await statement.execute(trx);
}

type SwitchingDialect = Pick<Dialect, 'searchTriggersLock' | 'searchTriggersRunning' | 'switchSearchTriggers'>;

/**
 * Takes the lock matchSearchTriggers takes, early: before a transaction that will switch the
 * triggers deletes rows that a record write waits for (the collection a write into it refers
 * to), so that the write waits for the whole transaction rather than the two for each other.
 */
export async function holdSearchTriggers(trx: Executor, dialect: Pick<Dialect, 'searchTriggersLock'>): Promise<void> {
  if (dialect.searchTriggersLock) await dialect.searchTriggersLock.execute(trx);
}

async function someCollectionSearches(trx: Executor): Promise<boolean> {
  // Settings are JSON text written by JSON.stringify (collections.ts), with no searchFields key
  // when search is off: the key can only appear as itself, since a value's quotes are escaped.
  // Were anything else ever to match, the triggers would run for nothing, never miss a record.
  const row = await trx.selectFrom('collections').select('id').where('settings', 'like', '%"searchFields":%').limit(1).executeTakeFirst();
  return row !== undefined;
}
