import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Executor, SubmissionCountsTable } from '../../db/schema.js';

/** Why a public submission was refused, as the dashboard's chart tells them apart. HONEYPOT answered 201 but stored nothing. */
export const REFUSAL_REASONS = ['ORIGIN_NOT_ALLOWED', 'RATE_LIMITED', 'CAPTCHA_FAILED', 'HONEYPOT', 'TOO_LARGE', 'INVALID'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];
export type SubmissionOutcome = 'ACCEPTED' | RefusalReason;

const COLUMN_OF = {
  ACCEPTED: 'accepted',
  ORIGIN_NOT_ALLOWED: 'origin_not_allowed',
  RATE_LIMITED: 'rate_limited',
  CAPTCHA_FAILED: 'captcha_failed',
  HONEYPOT: 'honeypot',
  TOO_LARGE: 'too_large',
  INVALID: 'invalid',
} as const satisfies Record<SubmissionOutcome, keyof SubmissionCountsTable>;
type CountColumn = (typeof COLUMN_OF)[SubmissionOutcome];
const COUNT_COLUMNS = Object.values(COLUMN_OF);

const HOUR_MS = 3_600_000;
/** Rows older than this are deleted when counts are next written (at most once an hour). */
const KEEP_MS = 7 * 24 * HOUR_MS;
/** The chart's hours: the current one and the 23 before it. */
const CHART_HOURS = 24;

type Row = SubmissionCountsTable;

/**
 * Counts not yet written, per workspace, collection and hour. A refused request adds one here and
 * nothing to the database: a flood of them becomes one upsert per collection and hour at the next
 * flush (every 10 s and when the app closes, app.ts). Only collections that exist are counted
 * (the submission gate found them first), so this stays as small as the collections submitted to.
 */
export class SubmissionCounts {
  pending = new Map<string, Row>();
  /** The hour whose old rows were last deleted: deleting runs once an hour at most. */
  prunedHour: string | null = null;
}

declare module '../../services.js' {
  interface Services {
    submissionCounts: SubmissionCounts;
  }
}

export const hourOf = (at: Date): string => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS).toISOString();

function emptyRow(workspaceId: string, collectionId: string, hour: string): Row {
  return { workspace_id: workspaceId, collection_id: collectionId, hour, accepted: 0, origin_not_allowed: 0, rate_limited: 0, captcha_failed: 0, honeypot: 0, too_large: 0, invalid: 0 };
}

/** Counts one submission's outcome in memory. */
export function countSubmission(deps: Deps, target: { workspaceId: string; collectionId: string }, outcome: SubmissionOutcome): void {
  const hour = hourOf(deps.clock.now());
  const key = `${target.workspaceId}|${target.collectionId}|${hour}`;
  const { pending } = deps.services.submissionCounts;
  let row = pending.get(key);
  if (!row) pending.set(key, (row = emptyRow(target.workspaceId, target.collectionId, hour)));
  row[COLUMN_OF[outcome]] += 1;
}

/**
 * Adds the pending counts to the table, one upsert per collection and hour, each in its own
 * statement (no transaction held: a count lost to a failed write is put back for the next try).
 */
export async function flushSubmissionCounts(deps: Deps): Promise<void> {
  const counts = deps.services.submissionCounts;
  // Nothing counted, nothing written: an app without submissions never touches the table.
  if (counts.pending.size === 0) return;
  const rows = [...counts.pending.values()];
  counts.pending = new Map();
  for (const [index, row] of rows.entries()) {
    try {
      await upsert(deps.db, row);
    } catch (error) {
      for (const left of rows.slice(index)) putBack(counts, left);
      throw error;
    }
  }
  const hour = hourOf(deps.clock.now());
  if (counts.prunedHour !== hour) {
    counts.prunedHour = hour;
    await deps.db.deleteFrom('submission_counts').where('hour', '<', new Date(Date.parse(hour) - KEEP_MS).toISOString()).execute();
  }
}

function putBack(counts: SubmissionCounts, row: Row): void {
  const key = `${row.workspace_id}|${row.collection_id}|${row.hour}`;
  const current = counts.pending.get(key);
  if (!current) return void counts.pending.set(key, row);
  for (const column of COUNT_COLUMNS) current[column] += row[column];
}

async function upsert(executor: Executor, row: Row): Promise<void> {
  await executor
    .insertInto('submission_counts')
    .values(row)
    .onConflict((conflict) =>
      conflict.columns(['workspace_id', 'collection_id', 'hour']).doUpdateSet(
        Object.fromEntries(COUNT_COLUMNS.map((column) => [column, sql<number>`submission_counts.${sql.ref(column)} + excluded.${sql.ref(column)}`])) as Record<CountColumn, never>,
      ))
    .execute();
}

/** Deletes a collection's counts, written and pending (a collection deleted for good). */
export async function forgetSubmissionCounts(deps: Deps, executor: Executor, workspaceId: string, collectionId: string): Promise<void> {
  await executor.deleteFrom('submission_counts').where('workspace_id', '=', workspaceId).where('collection_id', '=', collectionId).execute();
  for (const [key, row] of deps.services.submissionCounts.pending) {
    if (row.workspace_id === workspaceId && row.collection_id === collectionId) deps.services.submissionCounts.pending.delete(key);
  }
}

export interface SubmissionChart {
  collectionId: string;
  /** Exactly 24, oldest first, the last one the current hour. */
  hours: { hour: string; accepted: number; refused: number }[];
  accepted: number;
  refused: number;
  refusedBy: Record<RefusalReason, number>;
}

/** The last 24 hours of a collection's submissions: what is written and what this process has not written yet. */
export async function submissionChart(deps: Deps, workspaceId: string, collectionId: string): Promise<SubmissionChart> {
  const current = Date.parse(hourOf(deps.clock.now()));
  const hours = Array.from({ length: CHART_HOURS }, (_, index) => new Date(current - (CHART_HOURS - 1 - index) * HOUR_MS).toISOString());
  const written = await deps.db
    .selectFrom('submission_counts')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('collection_id', '=', collectionId)
    .where('hour', '>=', hours[0]!)
    .execute();
  const pending = [...deps.services.submissionCounts.pending.values()].filter((row) => row.workspace_id === workspaceId && row.collection_id === collectionId);
  const byHour = new Map(hours.map((hour) => [hour, emptyRow(workspaceId, collectionId, hour)]));
  for (const row of [...written, ...pending]) {
    const sum = byHour.get(row.hour);
    if (sum) for (const column of COUNT_COLUMNS) sum[column] += Number(row[column]);
  }
  const refusedOf = (row: Row) => REFUSAL_REASONS.reduce((total, reason) => total + row[COLUMN_OF[reason]], 0);
  const chart: SubmissionChart = {
    collectionId,
    hours: hours.map((hour) => {
      const row = byHour.get(hour)!;
      return { hour, accepted: row.accepted, refused: refusedOf(row) };
    }),
    accepted: 0,
    refused: 0,
    refusedBy: Object.fromEntries(REFUSAL_REASONS.map((reason) => [reason, 0])) as Record<RefusalReason, number>,
  };
  for (const row of byHour.values()) {
    chart.accepted += row.accepted;
    chart.refused += refusedOf(row);
    for (const reason of REFUSAL_REASONS) chart.refusedBy[reason] += row[COLUMN_OF[reason]];
  }
  return chart;
}
