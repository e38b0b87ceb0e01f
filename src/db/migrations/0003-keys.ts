import type { Kysely } from 'kysely';

// API keys, their secrets (several during a rotation's grace period) and service accounts.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('service_accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('service_accounts_workspace').on('service_accounts').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('preview', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('collections', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('service_account_id', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('last_used_ip', 'text')
    .execute();
  await db.schema.createIndex('api_keys_workspace').on('api_keys').columns(['workspace_id', 'id']).execute();

  // One row per secret: the current one has no expiry; a rotated-out one lives until its grace ends.
  await db.schema
    .createTable('api_key_secrets')
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addPrimaryKeyConstraint('api_key_secrets_pk', ['key_id', 'secret_hash'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['api_key_secrets', 'api_keys', 'service_accounts']) await db.schema.dropTable(table).execute();
}
