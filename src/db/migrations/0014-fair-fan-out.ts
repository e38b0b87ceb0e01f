import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

// Fair fan-out (webhooks/fair-fan-out.ts, fair-claim.ts): the worker serves every workspace with
// waiting events a share per round, so one workspace's backlog (a million imported records) no
// longer holds another's new events behind it.
//
// - events.import_id: the import that wrote the event, null for ordinary writes. An import writes
//   its events in one long transaction; on PostgreSQL their index entries are there before they
//   commit, and a scan for "waiting events" would walk every one of them, round after round,
//   only to find them invisible. Ordinary events wait in events_waiting, which holds none of an
//   import's; an import's events are reached through its event_imports row, which becomes
//   visible at the import's commit, and then through events_imported.
// - events_waiting (workspace_id, id): per workspace in id order, so finding the workspaces with
//   waiting events is one index probe per workspace, and each workspace's share is read in order.
// - deliveries_pending (workspace_id, next_attempt_at): the same for the claim of due deliveries.
// - events_unfanned (migration 0012, PostgreSQL) served the old single-queue scan; nothing reads
//   it now, and every write kept it up to date.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('import_id', 'text').execute();
  await db.schema
    .createTable('event_imports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create index events_waiting on events (workspace_id, id) where fanned_out_at is null and import_id is null`.execute(db);
  await sql`create index events_imported on events (import_id, id) where fanned_out_at is null and import_id is not null`.execute(db);
  await sql`create index deliveries_pending on deliveries (workspace_id, next_attempt_at) where state = 'pending'`.execute(db);
  if (dialectOf(db).engine === 'postgres') await sql`drop index if exists events_unfanned`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db).engine === 'postgres') await sql`create index events_unfanned on events (id) where fanned_out_at is null`.execute(db);
  await sql`drop index deliveries_pending`.execute(db);
  await sql`drop index events_imported`.execute(db);
  await sql`drop index events_waiting`.execute(db);
  await db.schema.dropTable('event_imports').execute();
  await db.schema.alterTable('events').dropColumn('import_id').execute();
}
