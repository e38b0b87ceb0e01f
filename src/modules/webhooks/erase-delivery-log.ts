import type { Executor } from '../../db/schema.js';
import { firstIdOfErased, isErasedRecordEvent, type ErasedRecords } from '../events/erased-records.js';

/**
 * Erases what the delivery log keeps of the erased records' data. A delivery keeps no copy of
 * its body (it is read from the event, which eraseRecordEvents turns into a tombstone), but each
 * attempt keeps the first 16 KiB of the receiver's answer, and a receiver may echo what it was
 * sent: those answers are emptied. Status, duration, headers and error stay, so the log still
 * tells what happened. Returns how many attempts were emptied.
 */
export async function eraseDeliveryAnswers(executor: Executor, erased: ErasedRecords): Promise<number> {
  const result = await executor
    .updateTable('delivery_attempts')
    .set({ response_body: '' })
    .where('workspace_id', '=', erased.workspaceId)
    .where('delivery_id', 'in', (eb) => eb
      .selectFrom('deliveries')
      .select('deliveries.id')
      // Through deliveries_webhook (webhook_id, id): the workspace's webhooks, deliveries made since.
      .where('deliveries.webhook_id', 'in', eb.selectFrom('webhooks').select('webhooks.id').where('webhooks.workspace_id', '=', erased.workspaceId))
      .where('deliveries.id', '>=', firstIdOfErased('dlv', erased))
      .where('deliveries.event_id', 'in', eb.selectFrom('events').select('events.id').where(isErasedRecordEvent(erased))))
    .where('response_body', '!=', '')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
