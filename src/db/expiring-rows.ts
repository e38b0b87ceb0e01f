import type { RawBuilder, SqlBool } from 'kysely';
import type { Database } from './schema.js';

/**
 * Rows of one table that are only kept for a while, as the module that owns the table describes
 * them for housekeeping (modules/housekeeping/purge-expired.ts), which deletes them a range of
 * `key` at a time.
 */
export interface ExpiringRows {
  /** The name housekeeping's counts and log use. */
  name: string;
  table: keyof Database;
  /**
   * The columns the walk follows, in their order, together unique: the primary key's, or, for a
   * time-ordered walk, a time column an index leads with and then the primary key's columns to
   * break its ties.
   */
  key: readonly string[];
  /**
   * Where a time-ordered walk stops, at `now`: only rows whose first `key` column is below this
   * value can have had their time, so the walk reads the index up to it and never looks at the
   * rest of the table. Absent: the walk goes through the whole table.
   */
  until?: (now: Date) => string;
  /**
   * Which rows the walk looks at, when not all of the table: the condition of the partial index
   * it follows. Absent: every row.
   */
  among?: RawBuilder<SqlBool>;
  /** Whether a row has had its time, at `now`, as a condition on the table's own columns. */
  expired: (now: Date) => RawBuilder<SqlBool>;
}
