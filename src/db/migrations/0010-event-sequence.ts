import { sql, type Kysely } from 'kysely';

// Events get a place in one sequence when the worker fans them out (`seq`), in the order they
// become visible to it. Ids sort by the time they were made, but a transaction that made an
// event earlier may commit later, so "every event after this id" could skip it; "every event
// after this place in the sequence" cannot, which is what the event feed, the event stream and
// their resumption need. The partial indexes hold only sequenced events, so writing an event
// costs nothing more until it is fanned out.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('seq', 'bigint').execute();
  await sql`update events set seq = ranked.place
    from (select id, row_number() over (order by id) as place from events where fanned_out_at is not null) as ranked
    where events.id = ranked.id`.execute(db);
  await db.schema.createIndex('events_feed').on('events').columns(['workspace_id', 'seq']).where(sql.ref('seq'), 'is not', null).execute();
  await db.schema.createIndex('events_sequence').on('events').column('seq').where(sql.ref('seq'), 'is not', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('events_sequence').execute();
  await db.schema.dropIndex('events_feed').execute();
  await db.schema.alterTable('events').dropColumn('seq').execute();
}
