import type { Kysely } from 'kysely';

// Files (metadata; the bytes live in the file store), which records they are attached to, and
// the content still to remove from the store after a delete committed.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('collection_id', 'text', (c) => c.notNull().references('collections.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    // bigint: files pass 2 GiB, which PostgreSQL's integer cannot hold.
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('created_by_type', 'text', (c) => c.notNull())
    .addColumn('created_by_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('files_collection').on('files').columns(['collection_id', 'id']).execute();

  await db.schema
    .createTable('record_files')
    .addColumn('record_id', 'text', (c) => c.notNull().references('records.id').onDelete('cascade'))
    .addColumn('file_id', 'text', (c) => c.notNull().references('files.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('collection_id', 'text', (c) => c.notNull())
    .addColumn('attached_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('record_files_pk', ['record_id', 'file_id'])
    .execute();
  await db.schema.createIndex('record_files_file').on('record_files').columns(['file_id', 'record_id']).execute();

  // Written in the transaction that deletes a file row, removed once the store has let go of the
  // content: a crash in between leaves a row here to retry, never an orphan nobody knows of.
  await db.schema
    .createTable('file_deletions')
    .addColumn('storage_key', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('file_deletions_workspace').on('file_deletions').columns(['workspace_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['file_deletions', 'record_files', 'files']) await db.schema.dropTable(table).execute();
}
