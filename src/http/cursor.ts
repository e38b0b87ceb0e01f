import { invalidRequest } from '../errors.js';
import type { IdPrefix } from '../ids.js';
import { jsonBytes, PageBudget } from '../page-budget.js';

/** Cursors are opaque to callers: base64url of the sort position they continue after. */
export function encodeCursor(position: string): string {
  return Buffer.from(position, 'utf8').toString('base64url');
}

/**
 * The position a cursor continues after. `isPosition` says what a position of this list looks
 * like, so a well-encoded cursor that no page of it could have produced (one from another list,
 * or made up) is a 400 and not an empty or shifted page (docs/design.md §2).
 */
export function decodeCursor(cursor: string | undefined, isPosition: (position: string) => boolean): string | undefined {
  if (cursor === undefined) return undefined;
  const position = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!position || encodeCursor(position) !== cursor || !isPosition(position)) {
    throw invalidRequest('The cursor is not valid; pass nextCursor exactly as received.', { field: 'querystring.cursor' });
  }
  return position;
}

/** The positions of a list ordered by id: the last row's id, of the list's own kind. */
export const idPosition = (prefix: IdPrefix) => {
  const pattern = new RegExp(`^${prefix}_[0-9a-z]{26}$`);
  return (position: string) => pattern.test(position);
};

/**
 * The positions of a list ordered by a stored time, then a key that is unique with it:
 * `<time> <key>`, split back into both.
 */
export function timedPosition(key: RegExp) {
  const pattern = new RegExp(`^(\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z) (${key.source})$`);
  return {
    of: (at: string, keyValue: string) => `${at} ${keyValue}`,
    test: (position: string) => pattern.test(position),
    read: (position: string): { at: string; key: string } => {
      const [, at, keyValue] = pattern.exec(position)!;
      return { at: at!, key: keyValue! };
    },
  };
}

/**
 * Given limit+1 rows, the page to answer and the cursor to the next one. The page also ends
 * early, with a cursor, where the next row would take the answer past `budgetBytes`
 * (PLAINBASE_PAGE_BYTES): a list of large things (settings, schemas, details) cannot make an
 * answer of hundreds of megabytes. A page holds at least one row.
 */
export function page<T>(rows: T[], limit: number, positionOf: (row: T) => string, budgetBytes: number): { data: T[]; nextCursor: string | null } {
  const budget = new PageBudget(budgetBytes);
  const data: T[] = [];
  for (const row of rows) {
    if (data.length === limit || !budget.admits(jsonBytes(row))) break;
    data.push(row);
  }
  return { data, nextCursor: rows.length > data.length ? encodeCursor(positionOf(data[data.length - 1]!)) : null };
}
