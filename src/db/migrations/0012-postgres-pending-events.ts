import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

// PostgreSQL only: an index of the events not yet fanned out, in id order, for the worker's
// "next events to fan out" (webhooks/delivery-queue.ts pendingEvents). The index events_pending
// (fanned_out_at, id) does not serve it on PostgreSQL: its planner does not take `fanned_out_at
// is null` as fixing the first column, so it reads every pending event and sorts them all to
// keep the first few hundred. After a large import (statistics still saying that nothing is
// pending) that was 0.28 s a batch for 1,000,000 pending events, a sort spilled to disk, and
// minutes of fan-out during which no webhook of any workspace was served. With this index each
// batch reads its few hundred entries in order (0.3 ms). SQLite's planner does use
// events_pending in id order for `is null`: nothing to do there.

export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db).engine !== 'postgres') return;
  await sql`create index events_unfanned on events (id) where fanned_out_at is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db).engine !== 'postgres') return;
  await sql`drop index events_unfanned`.execute(db);
}
