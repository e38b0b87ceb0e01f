import type { Kysely } from 'kysely';

// Undoing what one caller did (modules/records/revert-actor.ts) looks up the versions one actor
// wrote in a window of time: by workspace, actor and time, with the record's id in the index so
// the list of records is read from the index alone.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('record_versions_actor')
    .on('record_versions')
    .columns(['workspace_id', 'actor_type', 'actor_id', 'changed_at', 'record_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('record_versions_actor').execute();
}
