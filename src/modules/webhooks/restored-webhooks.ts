import type { Executor } from '../../db/schema.js';

/**
 * The tables of the webhooks module, parents first: a backup (modules/backups/) copies them
 * without naming them itself, since only this module names the delivery tables.
 */
export const WEBHOOK_TABLES = ['webhooks', 'deliveries', 'delivery_attempts'] as const;

/**
 * After a restore, every webhook that was on is turned off with the reason `restored`: nothing is
 * sent to a real receiver until a person turns it back on (setWebhookEnabled), and then the
 * deliveries held meanwhile, those restored pending included, go out as for any webhook that was
 * off. Answers how many webhooks it turned off.
 */
export async function holdRestoredWebhooks(executor: Executor, at: Date): Promise<number> {
  const result = await executor
    .updateTable('webhooks')
    .set({ enabled: 0, disabled_reason: 'restored', updated_at: at.toISOString() })
    .where('enabled', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
