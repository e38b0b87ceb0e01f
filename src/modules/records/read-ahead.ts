import type { RowBatches } from '../../db/row-stream.js';
import type { Deps } from '../../deps.js';

/**
 * How many page budgets (PLAINBASE_PAGE_BYTES) of records a read may hold before it has looked
 * at them. Rows come a batch at a time; a batch holds as many rows as fit in this many budgets
 * at the largest a record can be (PLAINBASE_BODY_LIMIT): 64 with the defaults. So a default page
 * of 50 is still read in one call (one round trip on PostgreSQL), and a page of 1,000 large
 * records is read a batch at a time, never 1,000 at once.
 */
const READ_AHEAD_PAGES = 4;

/** The batches for reading up to `maxRows` records. */
export function readAhead(deps: Pick<Deps, 'config'>, maxRows: number): RowBatches {
  const { pageBytes, bodyLimitBytes } = deps.config;
  return { batchRows: Math.max(1, Math.floor((READ_AHEAD_PAGES * pageBytes) / bodyLimitBytes)), maxRows };
}
