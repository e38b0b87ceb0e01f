import { dialectOf } from './dialect.js';
import type { Executor } from './schema.js';

/** The rows whose children are counted against a per-tenant limit. */
export type CountedParent = 'people' | 'workspaces' | 'collections';

/**
 * Locks the row `id` of `table` until the caller's transaction ends, so that a count of its
 * children taken next stays true until the caller's insert commits: a concurrent create that
 * counts the same children waits here, and then counts the row this one inserted. Two creates at
 * the limit therefore never both pass.
 *
 * PostgreSQL takes FOR NO KEY UPDATE: it queues the counting creates one after another but leaves
 * writes that only reference the row (a record's or a key's foreign key takes KEY SHARE) free to
 * run. SQLite needs no lock: its one connection runs one transaction at a time. The caller makes
 * no network call while it holds the lock.
 */
export async function lockParentRow(executor: Executor, table: CountedParent, id: string): Promise<void> {
  if (!dialectOf(executor).supportsRowLocks) return;
  await executor.selectFrom(table).select('id').where('id', '=', id).forNoKeyUpdate().execute();
}
