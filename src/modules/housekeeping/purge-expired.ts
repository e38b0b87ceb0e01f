import { sql, type RawBuilder } from 'kysely';
import type { ExpiringRows } from '../../db/expiring-rows.js';
import type { Deps } from '../../deps.js';
import { oldVersions } from '../history/record-versions.js';
import { EXPIRED_ANSWERS } from '../idempotency/idempotency.js';
import { EXPIRED_INVITES } from '../invites/invites.js';
import { expiredSessions } from '../sessions/sessions.js';
import { OLD_DELIVERY_LOG } from '../webhooks/delivery-queue.js';

/**
 * At most this many rows of a table are looked at by one delete, each in a transaction of its
 * own: a purge of a million expired rows is a thousand short writes that other writes fit
 * between, not one long one that holds them all (SQLite has one writer at a time).
 */
export const PURGE_BATCH_ROWS = 1000;

/**
 * What housekeeping purges (docs/operations.md, "Housekeeping"), as the module owning each table
 * describes it. Judged by each row's own times, the same in every workspace.
 */
const expiringRows = (deps: Deps): readonly ExpiringRows[] => [
  EXPIRED_ANSWERS,
  expiredSessions(deps),
  EXPIRED_INVITES,
  oldVersions(deps.config.historyDays),
  // In this order: an attempt goes before its delivery, a delivery before its event.
  ...OLD_DELIVERY_LOG,
];

/** How many rows each kind lost, by name; `claimed` false when another process was at it. */
export interface PurgeRound {
  claimed: boolean;
  purged: Record<string, number>;
  /** The delete transactions the round ran. */
  batches: number;
  /** The most rows one of them deleted: never more than the batch size. */
  largestBatch: number;
}

const valueTuple = (values: readonly unknown[]) => sql`(${sql.join(values.map((value) => sql`${value}`))})`;

/**
 * Purges every kind of expired row, a batch at a time: each batch is one transaction that first
 * takes the housekeeping lock (PostgreSQL; SQLite has one process) and deletes the expired rows
 * among the next `batchRows` of the table in its walk's order. A time-ordered walk (`until`) reads
 * only the rows older than its end, through the index its time column leads, and stops there.
 * When another process holds the lock, this one leaves the round to it and answers
 * `claimed: false`; nothing is deleted twice either way, since a delete finds only rows that are
 * still there.
 */
export async function purgeExpired(deps: Deps, batchRows = PURGE_BATCH_ROWS): Promise<PurgeRound> {
  const now = deps.clock.now();
  const round: PurgeRound = { claimed: true, purged: {}, batches: 0, largestBatch: 0 };
  for (const kind of expiringRows(deps)) {
    round.purged[kind.name] = 0;
    const columns = sql.join(kind.key.map((column) => sql.ref(column)));
    const key = sql`(${columns})`;
    // The first column bounded on its own as well: an index that holds only it (a time) still
    // serves the range, the whole key then sorting out ties within it.
    const lead = sql.ref(kind.key[0]!);
    const until = kind.until?.(now) ?? null;
    let after: unknown[] | null = null;
    for (;;) {
      const walked: RawBuilder<unknown>[] = [
        after === null ? null : sql`${lead} >= ${after[0]} and ${key} > ${valueTuple(after)}`,
        until === null ? null : sql`${lead} < ${until}`,
        kind.among ?? null,
      ].filter((bound) => bound !== null);
      const where: RawBuilder<unknown> = walked.length === 0 ? sql`` : sql`where ${sql.join(walked, sql` and `)}`;
      // The batch's last key, read before the write: the delete then touches one key range only.
      const { rows }: { rows: Record<string, unknown>[] } = await sql<Record<string, unknown>>`select ${columns}
        from ${sql.table(kind.table)}
        ${where}
        order by ${columns}
        limit 1 offset ${sql.lit(batchRows - 1)}`.execute(deps.db);
      const last: unknown[] | null = rows[0] ? kind.key.map((column) => rows[0]![column]) : null;
      const deleted = await deps.db.transaction().execute(async (trx) => {
        const lock = deps.dialect.housekeepingLock;
        if (lock && !isTrue((await lock.execute(trx)).rows[0]?.claimed)) return null;
        const bounds = [
          ...walked,
          last === null ? null : sql`${lead} <= ${last[0]} and ${key} <= ${valueTuple(last)}`,
          kind.expired(now),
        ].filter((bound) => bound !== null);
        const result = await sql`delete from ${sql.table(kind.table)} where ${sql.join(bounds, sql` and `)}`.execute(trx);
        return Number(result.numAffectedRows ?? 0);
      });
      if (deleted === null) return { ...round, claimed: false };
      round.batches += 1;
      round.purged[kind.name]! += deleted;
      round.largestBatch = Math.max(round.largestBatch, deleted);
      if (last === null) break;
      after = last;
    }
  }
  return round;
}

/** PostgreSQL answers a boolean; kept loose for drivers that answer 1 or 't'. */
const isTrue = (value: unknown) => value === true || value === 1 || value === 't';
