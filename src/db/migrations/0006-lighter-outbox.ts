import type { Kysely } from 'kysely';

// No query reads the outbox by workspace (the worker reads it by events_pending, a replay by
// id), and every event written kept this index up to date for nothing: about 4% of a bulk
// import's database work (docs/import-export.md).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('events_workspace').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('events_workspace').on('events').columns(['workspace_id', 'id']).execute();
}
