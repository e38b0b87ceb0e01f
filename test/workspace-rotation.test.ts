import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.js';
import { claimWorkspaces } from '../src/modules/webhooks/fair-claim.js';
import { REUSE_MS } from '../src/modules/webhooks/workspace-rotation.js';
import { describeEachEngine, freshStorage } from './support/harness.js';

/**
 * The claim's list of workspaces with pending deliveries (fair-claim.ts, workspace-rotation.ts):
 * a claim that may reuse it takes the last list while it is younger than REUSE_MS, so a
 * workspace whose first delivery arrived since is missed until then; a claim that may not (the
 * worker's rounds that fan out, every claim outside the worker's busy rounds) always looks.
 */
describeEachEngine('the claim reuses a recent list of workspaces only when asked', (engine) => {
  let storage: Awaited<ReturnType<typeof freshStorage>>;
  afterEach(async () => {
    await storage?.close();
  });

  it('sees a new workspace at once without reuse, and within REUSE_MS with it', async () => {
    storage = await freshStorage(engine);
    await migrateToLatest(storage.db);
    const { db, dialect } = storage;
    const at = '2026-11-26T00:00:00.000Z';
    const addPending = async (workspace: string) => {
      await db.insertInto('workspaces').values({ id: workspace, name: workspace, created_at: at }).execute();
      await db.insertInto('webhooks').values({
        id: `wh_${workspace}`, workspace_id: workspace, url: 'http://localhost/x', secret: 's', events: '["*"]', collections: null,
        enabled: 1, disabled_reason: null, dead_streak: 0, created_at: at, updated_at: at,
      }).execute();
      await db.insertInto('events').values({
        id: `evt_${workspace}`, workspace_id: workspace, collection_id: 'col_1', type: 'record.created', created_at: at,
        fanned_out_at: at, data: '{}', seq: null, import_id: null,
      }).execute();
      await db.insertInto('deliveries').values({
        id: `dlv_${workspace}`, workspace_id: workspace, webhook_id: `wh_${workspace}`, event_id: `evt_${workspace}`, event_type: 'record.created',
        state: 'pending', attempt_count: 0, next_attempt_at: at, locked_until: null, created_at: at, updated_at: at,
      }).execute();
    };
    // The list is kept per database (the worker's key): this test's own key.
    const key = {};
    const claim = (reuse: boolean) => db.transaction().execute((trx) => claimWorkspaces(trx, dialect, key, new Set(), reuse));

    await addPending('ws_a');
    const scanned = performance.now();
    expect(await claim(false)).toEqual({ workspaces: ['ws_a'], more: false });
    await addPending('ws_b');
    const reused = await claim(true);
    // Reused only while the list is young; a slow machine may have let it age already.
    if (performance.now() - scanned < REUSE_MS) expect(reused.workspaces).toEqual(['ws_a']);
    expect(await claim(false)).toEqual({ workspaces: ['ws_a', 'ws_b'], more: false });

    await addPending('ws_c');
    await sleep(REUSE_MS + 10);
    expect(await claim(true)).toEqual({ workspaces: ['ws_a', 'ws_b', 'ws_c'], more: false });
  });
});
