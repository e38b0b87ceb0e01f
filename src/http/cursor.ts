import { invalidRequest } from '../errors.js';

/** Cursors are opaque to callers: base64url of the sort position they continue after. */
export function encodeCursor(position: string): string {
  return Buffer.from(position, 'utf8').toString('base64url');
}

/**
 * The position a cursor continues after. `isPosition` lets a list refuse a well-encoded cursor that
 * no page of it could have produced (one from another list, or made up), as a 400 and not as an
 * empty or shifted page.
 */
export function decodeCursor(cursor: string | undefined, isPosition: (position: string) => boolean = () => true): string | undefined {
  if (cursor === undefined) return undefined;
  const position = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!position || encodeCursor(position) !== cursor || !isPosition(position)) {
    throw invalidRequest('The cursor is not valid; pass nextCursor exactly as received.', { field: 'querystring.cursor' });
  }
  return position;
}

/** Given limit+1 rows, the page to answer and the cursor to the next one. */
export function page<T>(rows: T[], limit: number, positionOf: (row: T) => string): { data: T[]; nextCursor: string | null } {
  const data = rows.slice(0, limit);
  return { data, nextCursor: rows.length > limit ? encodeCursor(positionOf(data[data.length - 1]!)) : null };
}
