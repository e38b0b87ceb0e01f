import { sql, type Kysely } from 'kysely';

// The delivery log's 30 days, purged by housekeeping a batch at a time (modules/webhooks/
// delivery-queue.ts OLD_DELIVERY_LOG) in the order of time, stopping at the cutoff:
// - deliveries_finished (updated_at, id), finished deliveries only (state not pending): the walk over those last
//   changed before the cutoff. A delivery's id says when it was made at the earliest, not when it
//   finished, and the process's ids never go back in time when its clock does, so no walk by id
//   could stop at a time.
// - deliveries_event (event_id): whether a delivered event is still referred to by a delivery, one
//   probe per event, so a batch of old events never reads the whole table.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index deliveries_finished on deliveries (updated_at, id) where state <> 'pending'`.execute(db);
  await db.schema.createIndex('deliveries_event').on('deliveries').column('event_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('deliveries_event').execute();
  await db.schema.dropIndex('deliveries_finished').execute();
}
