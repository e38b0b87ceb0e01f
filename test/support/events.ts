import { eventMessageText } from '../../src/modules/events/outbox.js';
import type { TestApp } from './harness.js';

/** The outbox as the webhook worker will read it: every event message, oldest first. */
export async function outbox(t: TestApp): Promise<{ id: string; type: string; workspaceId: string; collectionId: string; createdAt: string; data: any }[]> {
  const rows = await t.deps.db.selectFrom('events').select(['id', 'type', 'created_at', 'workspace_id', 'collection_id', 'data']).orderBy('id').execute();
  return rows.map((row) => JSON.parse(eventMessageText(row)));
}
