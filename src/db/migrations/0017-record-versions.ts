import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

// Record history: one row per revision of a record, the record as that revision left it, with
// who made it, when, under which request and what kind of change it was
// (modules/history/record-versions.ts). Written in the transaction of the change itself; rows go
// with a permanent delete of their record or collection, and after PLAINBASE_HISTORY_DAYS.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('record_versions')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('collection_id', 'text', (c) => c.notNull())
    .addColumn('record_id', 'text', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull())
    // JSON text on SQLite, jsonb on PostgreSQL, as records.data.
    .addColumn('data', dialectOf(db).engine === 'postgres' ? sql`jsonb` : sql`text`, (c) => c.notNull())
    .addColumn('schema_version', 'integer')
    .addColumn('change', 'text', (c) => c.notNull())
    .addColumn('changed_at', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_name', 'text')
    .addColumn('request_id', 'text')
    .addPrimaryKeyConstraint('record_versions_pkey', ['workspace_id', 'record_id', 'revision'])
    .execute();
  // The retention purge walks by age.
  await db.schema.createIndex('record_versions_changed_at').on('record_versions').column('changed_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('record_versions').execute();
}
