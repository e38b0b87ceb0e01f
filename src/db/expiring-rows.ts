import type { RawBuilder, SqlBool } from 'kysely';
import type { Database } from './schema.js';

/**
 * Rows of one table that are only kept for a while, as the module that owns the table describes
 * them for housekeeping (modules/housekeeping/purge-expired.ts), which deletes them in ranges of
 * the primary key.
 */
export interface ExpiringRows {
  /** The name housekeeping's counts and log use. */
  name: string;
  table: keyof Database;
  /** The primary key's columns, in its order. */
  key: readonly string[];
  /** Whether a row has had its time, at `now`, as a condition on the table's own columns. */
  expired: (now: Date) => RawBuilder<SqlBool>;
}
