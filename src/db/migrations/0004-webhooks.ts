import type { Kysely } from 'kysely';

// Webhooks, one delivery per (event, webhook), and every attempt's log. Events gain a mark for
// "deliveries created", which is how the worker knows what it has fanned out.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('collections', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('dead_streak', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_workspace').on('webhooks').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('deliveries_due').on('deliveries').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('deliveries_webhook').on('deliveries').columns(['webhook_id', 'id']).execute();

  await db.schema
    .createTable('delivery_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('deliveries.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('response_headers', 'text', (c) => c.notNull())
    .addColumn('response_body', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('delivery_attempts_delivery').on('delivery_attempts').columns(['delivery_id', 'id']).execute();
  await db.schema.createIndex('delivery_attempts_at').on('delivery_attempts').column('at').execute();

  await db.schema.alterTable('events').addColumn('fanned_out_at', 'text').execute();
  await db.schema.createIndex('events_pending').on('events').columns(['fanned_out_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('events_pending').execute();
  await db.schema.alterTable('events').dropColumn('fanned_out_at').execute();
  for (const table of ['delivery_attempts', 'deliveries', 'webhooks']) await db.schema.dropTable(table).execute();
}
