import { sql } from 'kysely';
import type { ExpiringRows } from '../../db/expiring-rows.js';
import type { Deps } from '../../deps.js';
import { EXPIRED_ANSWERS } from '../idempotency/idempotency.js';
import { EXPIRED_INVITES } from '../invites/invites.js';
import { expiredSessions } from '../sessions/sessions.js';

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
const expiringRows = (deps: Deps): readonly ExpiringRows[] => [EXPIRED_ANSWERS, expiredSessions(deps), EXPIRED_INVITES];

/** How many rows each kind lost, by name; `claimed` false when another process was at it. */
export interface PurgeRound {
  claimed: boolean;
  purged: Record<string, number>;
  /** The delete transactions the round ran. */
  batches: number;
  /** The most rows one of them deleted: never more than the batch size. */
  largestBatch: number;
}

const keyTuple = (columns: readonly string[]) => sql`(${sql.join(columns.map((column) => sql.ref(column)))})`;
const valueTuple = (values: readonly unknown[]) => sql`(${sql.join(values.map((value) => sql`${value}`))})`;

/**
 * Purges every kind of expired row, a batch at a time: each batch is one transaction that first
 * takes the housekeeping lock (PostgreSQL; SQLite has one process) and deletes the expired rows
 * among the next `batchRows` of the table in its key's order. When another process holds the
 * lock, this one leaves the round to it and answers `claimed: false`; nothing is deleted twice
 * either way, since a delete finds only rows that are still there.
 */
export async function purgeExpired(deps: Deps, batchRows = PURGE_BATCH_ROWS): Promise<PurgeRound> {
  const now = deps.clock.now();
  const round: PurgeRound = { claimed: true, purged: {}, batches: 0, largestBatch: 0 };
  for (const kind of expiringRows(deps)) {
    round.purged[kind.name] = 0;
    const key = keyTuple(kind.key);
    let after: unknown[] | null = null;
    for (;;) {
      // The batch's last key, read before the write: the delete then touches one key range only.
      const { rows }: { rows: Record<string, unknown>[] } = await sql<Record<string, unknown>>`select ${sql.join(kind.key.map((column) => sql.ref(column)))}
        from ${sql.table(kind.table)}
        ${after === null ? sql`` : sql`where ${key} > ${valueTuple(after)}`}
        order by ${sql.join(kind.key.map((column) => sql.ref(column)))}
        limit 1 offset ${sql.lit(batchRows - 1)}`.execute(deps.db);
      const last: unknown[] | null = rows[0] ? kind.key.map((column) => rows[0]![column]) : null;
      const deleted = await deps.db.transaction().execute(async (trx) => {
        const lock = deps.dialect.housekeepingLock;
        if (lock && !isTrue((await lock.execute(trx)).rows[0]?.claimed)) return null;
        const bounds = [
          after === null ? null : sql`${key} > ${valueTuple(after)}`,
          last === null ? null : sql`${key} <= ${valueTuple(last)}`,
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
