import type { Kysely } from 'kysely';

// People, workspaces, sessions, invites, the audit log and sign-in throttling.
// Migrations take Kysely<any>: they describe the schema as it was then, not today's types.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('people')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('joined_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('memberships_pk', ['workspace_id', 'person_id'])
    .execute();
  await db.schema.createIndex('memberships_person').on('memberships').column('person_id').execute();

  await db.schema
    .createTable('sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_person').on('sessions').column('person_id').execute();

  await db.schema
    .createTable('invites')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('invited_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('accepted_at', 'text')
    .addColumn('accepted_by', 'text')
    .execute();
  await db.schema.createIndex('invites_workspace').on('invites').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text')
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_name', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('request_id', 'text')
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_workspace').on('audit_log').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('sign_in_throttle')
    .addColumn('subject', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('window_started_at', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text')
    .execute();

  await db.schema
    .createTable('setup_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['setup_tokens', 'sign_in_throttle', 'audit_log', 'invites', 'sessions', 'memberships', 'workspaces', 'people']) {
    await db.schema.dropTable(table).execute();
  }
}
