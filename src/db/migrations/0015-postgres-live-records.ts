import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

// PostgreSQL only: the live (not trashed) records of each collection in id order, the default
// list's order. With records_collection (collection_id, id) alone, a collection that has just
// grown faster than ANALYZE runs (a new table, or a new collection in a large analyzed one) is
// estimated at a few dozen rows, and the planner reads all of its records with a bitmap scan and
// sorts them to keep the first page: 9,000 records, 50-80 ms a list. This index holds every
// condition of the list's scope, so its ordered scan needs no filter and no sort, and it is the
// cheapest plan whatever the estimate says (test/plans-without-statistics.test.ts). SQLite's
// planner already walks records_collection in order without statistics.

export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db).engine !== 'postgres') return;
  await sql`create index records_live on records (workspace_id, collection_id, id) where trashed_at is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db).engine !== 'postgres') return;
  await sql`drop index records_live`.execute(db);
}
