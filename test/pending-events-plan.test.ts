import { CompiledQuery } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.js';
import type { EventsTable } from '../src/db/schema.js';
import { pendingEvents } from '../src/modules/webhooks/delivery-queue.js';
import { describeEachEngine, freshStorage } from './support/harness.js';

/**
 * The worker's "next events to fan out" after a large import: the table's statistics were taken
 * when every event had been fanned out, then many pending ones arrived (an import writes its
 * events in one transaction). The query must read the oldest few in id order from an index,
 * never all pending events sorted (on PostgreSQL that was 0.28 s a batch with 1,000,000
 * pending, for every batch of the fan-out). One workspace is enough: the query spans them all.
 */
describeEachEngine('pending events, the fan-out query', (engine) => {
  let storage: Awaited<ReturnType<typeof freshStorage>>;
  afterEach(async () => {
    await storage?.close();
  });

  const event = (i: number, fannedOut: boolean): EventsTable => ({
    id: `evt_${String(i).padStart(26, '0')}`,
    workspace_id: 'ws_1',
    collection_id: 'col_1',
    type: 'record.created',
    created_at: '2026-11-26T00:00:00.000Z',
    fanned_out_at: fannedOut ? '2026-11-26T00:00:01.000Z' : null,
    data: '{}',
    seq: fannedOut ? i + 1 : null,
  });

  async function insertEvents(from: number, to: number, fannedOut: boolean): Promise<void> {
    for (let start = from; start < to; start += 500) {
      const rows = Array.from({ length: Math.min(500, to - start) }, (_, k) => event(start + k, fannedOut));
      await storage.db.insertInto('events').values(rows).execute();
    }
  }

  it('reads the oldest pending events through an index, in order, without sorting them all', async () => {
    storage = await freshStorage(engine);
    await migrateToLatest(storage.db);
    const { db, dialect } = storage;
    await insertEvents(0, 2_000, true);
    // As the worker would after a big batch (PostgreSQL); SQLite's planner keeps no such figures here.
    await dialect.refreshStatistics?.('events').execute(db);
    await insertEvents(2_000, 22_000, false);

    const query = pendingEvents(db, dialect, 500);
    const rows = await query.execute();
    expect(rows.map((row) => row.id)).toEqual(Array.from({ length: 500 }, (_, k) => event(2_000 + k, false).id));

    const { sql: text, parameters } = query.compile();
    if (engine === 'sqlite') {
      const { rows: plan } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, [...parameters]));
      const details = plan.map((row) => row.detail).join('\n');
      expect(details).toMatch(/USING (COVERING )?INDEX events_pending/);
      expect(details).not.toContain('USE TEMP B-TREE');
    } else {
      // In a transaction, as the worker runs it (FOR UPDATE SKIP LOCKED).
      const plan = await db.transaction().execute(async (trx) => {
        const { rows: explained } = await trx.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`explain (format json) ${text}`, [...parameters]));
        return JSON.stringify(explained[0]!['QUERY PLAN']);
      });
      expect(plan).toContain('"Index Name":"events_unfanned"');
      expect(plan).not.toMatch(/"Node Type":"(Incremental )?Sort"/);
    }
  });
});
