import { sql, type Kysely } from 'kysely';

// A webhook's health (modules/webhooks/webhook-health.ts) reads its own attempts by time: the last
// one, the failures since its last success, and 24 hourly counts. An attempt knew only its
// delivery, so reaching a webhook's attempts meant walking every delivery it had in 30 days.
// - delivery_attempts.webhook_id: the webhook of the attempt's delivery (kept beside it: a
//   delivery never changes webhook), filled in here for the attempts already logged.
// - delivery_attempts_webhook (webhook_id, at): those reads, each bounded by what it counts.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('delivery_attempts').addColumn('webhook_id', 'text').execute();
  await sql`update delivery_attempts set webhook_id = (select deliveries.webhook_id from deliveries where deliveries.id = delivery_attempts.delivery_id)`.execute(db);
  await db.schema.createIndex('delivery_attempts_webhook').on('delivery_attempts').columns(['webhook_id', 'at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('delivery_attempts_webhook').execute();
  await db.schema.alterTable('delivery_attempts').dropColumn('webhook_id').execute();
}
