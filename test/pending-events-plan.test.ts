import { CompiledQuery, type Transaction } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.js';
import type { Database } from '../src/db/schema.js';
import { dueDeliveries, workspacesPending } from '../src/modules/webhooks/fair-claim.js';
import { laneEvents, workspacesWaiting } from '../src/modules/webhooks/fair-fan-out.js';
import { describeEachEngine, freshStorage } from './support/harness.js';

/**
 * The fair fan-out's statements (webhooks/fair-fan-out.ts) after a large import: the statistics
 * were taken when every event had been fanned out, then a workspace got a backlog. Finding the
 * workspaces with waiting events probes events_waiting once per workspace (never walking a
 * backlog's entries), and a lane's share is read in id order from its index, never all of a
 * workspace's waiting events sorted. An import's events, committed or not, are not in
 * events_waiting at all: they are read through events_imported.
 */
describeEachEngine('waiting events, the fair fan-out queries', (engine) => {
  let storage: Awaited<ReturnType<typeof freshStorage>>;
  afterEach(async () => {
    await storage?.close();
  });

  const event = (i: number, workspace: string, fannedOut: boolean, importId: string | null = null) => ({
    id: `evt_${String(i).padStart(26, '0')}`,
    workspace_id: workspace,
    collection_id: 'col_1',
    type: 'record.created',
    created_at: '2026-11-26T00:00:00.000Z',
    fanned_out_at: fannedOut ? '2026-11-26T00:00:01.000Z' : null,
    data: '{}',
    seq: fannedOut ? i + 1 : null,
    import_id: importId,
  });

  async function insertEvents(from: number, to: number, workspace: string, fannedOut: boolean, importId: string | null = null): Promise<void> {
    for (let start = from; start < to; start += 500) {
      const rows = Array.from({ length: Math.min(500, to - start) }, (_, k) => event(start + k, workspace, fannedOut, importId));
      await storage.db.insertInto('events').values(rows).execute();
    }
  }

  async function planOf(trx: Transaction<Database>, text: string, parameters: readonly unknown[]): Promise<string> {
    if (engine === 'sqlite') {
      const { rows } = await trx.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, [...parameters]));
      return rows.map((row) => row.detail).join('\n');
    }
    const { rows } = await trx.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`explain (format json) ${text}`, [...parameters]));
    return JSON.stringify(rows[0]!['QUERY PLAN']);
  }

  it('finds waiting workspaces by index probes and reads each lane in order, without sorting', async () => {
    storage = await freshStorage(engine);
    await migrateToLatest(storage.db);
    const { db, dialect } = storage;
    await insertEvents(0, 2_000, 'ws_a', true);
    await dialect.refreshStatistics?.('events').execute(db);
    // A's backlog of ordinary events, a committed import's events, and B's one new event.
    await insertEvents(2_000, 22_000, 'ws_a', false);
    await insertEvents(22_000, 32_000, 'ws_a', false, 'imp_1');
    await insertEvents(40_000, 40_001, 'ws_b', false);

    await db.transaction().execute(async (trx) => {
      // As the round does before reading lanes (fair-fan-out.ts takeWaitingEvents).
      if (dialect.preferIndexOrder) await dialect.preferIndexOrder.execute(trx);
      const { rows } = await workspacesWaiting(dialect, '', 64).execute(trx);
      expect(rows.map((row) => row.workspace_id)).toEqual(['ws_a', 'ws_b']);
      const afterA = await workspacesWaiting(dialect, 'ws_a', 64).execute(trx);
      expect(afterA.rows.map((row) => row.workspace_id)).toEqual(['ws_b']);

      const b = await laneEvents(trx, dialect, { workspaceId: 'ws_b', importId: null }, 64).execute();
      expect(b.map((row) => row.id)).toEqual([event(40_000, 'ws_b', false).id]);
      const a = await laneEvents(trx, dialect, { workspaceId: 'ws_a', importId: null }, 64).execute();
      expect(a.map((row) => row.id)).toEqual(Array.from({ length: 64 }, (_, k) => event(2_000 + k, 'ws_a', false).id));
      const imported = await laneEvents(trx, dialect, { workspaceId: 'ws_a', importId: 'imp_1' }, 64).execute();
      expect(imported.map((row) => row.id)).toEqual(Array.from({ length: 64 }, (_, k) => event(22_000 + k, 'ws_a', false).id));

      // The loose scan: an index probe per workspace, no scan of the table or of a backlog.
      const scan = workspacesWaiting(dialect, '', 64).compile(trx);
      const scanPlan = await planOf(trx, scan.sql, scan.parameters);
      if (engine === 'sqlite') {
        expect(scanPlan).toMatch(/SEARCH events USING (COVERING )?INDEX events_waiting \(workspace_id>\?\)/);
        expect(scanPlan).not.toMatch(/SCAN events/);
      } else {
        expect(scanPlan).toContain('"Index Name":"events_waiting"');
        expect(scanPlan).not.toContain('"Seq Scan"');
        expect(scanPlan).not.toContain('Bitmap');
      }
      for (const lane of [{ workspaceId: 'ws_a', importId: null }, { workspaceId: 'ws_a', importId: 'imp_1' }]) {
        const { sql: text, parameters } = laneEvents(trx, dialect, lane, 64).compile();
        const plan = await planOf(trx, text, parameters);
        const index = lane.importId === null ? 'events_waiting' : 'events_imported';
        if (engine === 'sqlite') {
          expect(plan).toMatch(new RegExp(`USING (COVERING )?INDEX ${index}`));
          expect(plan).not.toContain('USE TEMP B-TREE');
        } else {
          expect(plan).toContain(`"Index Name":"${index}"`);
          expect(plan).not.toMatch(/"Node Type":"(Incremental )?Sort"/);
        }
      }
    });
  });

  it("claims a workspace's due deliveries in time order from deliveries_pending, past another's backlog", async () => {
    storage = await freshStorage(engine);
    await migrateToLatest(storage.db);
    const { db, dialect } = storage;
    const at = '2026-11-26T00:00:00.000Z';
    for (const workspace of ['ws_a', 'ws_b']) {
      await db.insertInto('workspaces').values({ id: workspace, name: workspace, created_at: at }).execute();
      await db.insertInto('webhooks').values({
        id: `wh_${workspace}`, workspace_id: workspace, url: 'http://localhost/x', secret: 's', events: '["*"]', collections: null,
        enabled: 1, disabled_reason: null, dead_streak: 0, created_at: at, updated_at: at,
      }).execute();
    }
    await insertEvents(0, 20_000, 'ws_a', true);
    await insertEvents(20_000, 20_001, 'ws_b', true);
    // A's 20,000 pending deliveries, all due before B's one.
    const delivery = (i: number, workspace: string) => ({
      id: `dlv_${String(i).padStart(26, '0')}`, workspace_id: workspace, webhook_id: `wh_${workspace}`, event_id: event(i, workspace, true).id,
      event_type: 'record.created', state: 'pending', attempt_count: 0, next_attempt_at: `2026-11-26T00:00:${String(Math.floor(i / 1000)).padStart(2, '0')}.000Z`,
      locked_until: null, created_at: at, updated_at: at,
    });
    for (let start = 0; start < 20_000; start += 500) {
      await db.insertInto('deliveries').values(Array.from({ length: 500 }, (_, k) => delivery(start + k, 'ws_a'))).execute();
    }
    await db.insertInto('deliveries').values(delivery(20_000, 'ws_b')).execute();

    await db.transaction().execute(async (trx) => {
      const { rows } = await workspacesPending(dialect, '', 64).execute(trx);
      expect(rows.map((row) => row.workspace_id)).toEqual(['ws_a', 'ws_b']);
      if (dialect.preferIndexOrder) await dialect.preferIndexOrder.execute(trx);
      const now = '2026-11-26T01:00:00.000Z';
      const b = await dueDeliveries(trx, dialect, 'ws_b', now, 16, []).execute();
      expect(b.map((row) => row.id)).toEqual([delivery(20_000, 'ws_b').id]);
      const query = dueDeliveries(trx, dialect, 'ws_a', now, 16, []);
      expect((await query.execute()).map((row) => row.id)).toEqual(Array.from({ length: 16 }, (_, k) => delivery(k, 'ws_a').id));
      const { sql: text, parameters } = query.compile();
      const plan = await planOf(trx, text, parameters);
      const scan = workspacesPending(dialect, '', 64).compile(trx);
      const scanPlan = await planOf(trx, scan.sql, scan.parameters);
      if (engine === 'sqlite') {
        expect(plan).toMatch(/USING (COVERING )?INDEX deliveries_pending/);
        expect(plan).not.toContain('USE TEMP B-TREE');
        expect(scanPlan).toMatch(/SEARCH deliveries USING (COVERING )?INDEX deliveries_pending \(workspace_id>\?\)/);
      } else {
        expect(plan).toContain('"Index Name":"deliveries_pending"');
        expect(plan).not.toMatch(/"Node Type":"(Incremental )?Sort"/);
        expect(scanPlan).toContain('"Index Name":"deliveries_pending"');
        expect(scanPlan).not.toContain('"Seq Scan"');
      }
    });
  });
});
