import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

// Collections, records, schema versions, indexes, the event outbox and idempotency keys.
// Record data is jsonb on PostgreSQL (indexable, comparable) and JSON text on SQLite.
export async function up(db: Kysely<any>): Promise<void> {
  const json = dialectOf(db).engine === 'postgres' ? sql`jsonb` : sql`text`;

  await db.schema
    .createTable('collections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('public', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('active_schema_version', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('trashed_at', 'text')
    .execute();
  // Names stay taken while a collection is in the trash, so the name alone is unique.
  await db.schema.createIndex('collections_name').on('collections').columns(['workspace_id', 'name']).unique().execute();

  await db.schema
    .createTable('records')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('collection_id', 'text', (c) => c.notNull().references('collections.id').onDelete('cascade'))
    .addColumn('data', json, (c) => c.notNull())
    .addColumn('schema_version', 'integer')
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('trashed_at', 'text')
    .execute();
  await db.schema.createIndex('records_collection').on('records').columns(['collection_id', 'id']).execute();

  await db.schema
    .createTable('schema_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('collection_id', 'text', (c) => c.notNull().references('collections.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('schema', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('schema_versions_version').on('schema_versions').columns(['collection_id', 'version']).unique().execute();

  await db.schema
    .createTable('record_indexes')
    .addColumn('collection_id', 'text', (c) => c.notNull().references('collections.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('unique', 'integer', (c) => c.notNull())
    .addColumn('sql_name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('record_indexes_pk', ['collection_id', 'name'])
    .execute();

  // The transactional outbox: written with the change, delivered by the webhook worker.
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('collection_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_workspace').on('events').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('caller_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['workspace_id', 'caller_id', 'key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['idempotency_keys', 'events', 'record_indexes', 'schema_versions', 'records', 'collections']) {
    await db.schema.dropTable(table).execute();
  }
}
