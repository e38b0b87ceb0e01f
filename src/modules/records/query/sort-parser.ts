import { AppError } from '../../../errors.js';
import { parseFieldRef, QUERYABLE_COLUMNS, type FieldRef } from './field-ref.js';

/**
 * `?sort=-createdAt,data.name`: a comma list of fields, `-` before one for descending order.
 * Fields are data.<path>, id, createdAt and updatedAt.
 *
 * Without a sort (absent or empty), records come oldest first by id: ids are ULIDs, so that is
 * creation order, and it needs no index beyond the primary one. Whatever the sort, id breaks ties
 * last (list.ts), so paging is stable.
 */

export interface SortKey {
  field: FieldRef;
  desc: boolean;
}

export const MAX_SORT_KEYS = 4;
const MAX_SORT_LENGTH = 4096;

export const DEFAULT_SORT: readonly SortKey[] = Object.freeze([{ field: { kind: 'column', name: 'id', column: QUERYABLE_COLUMNS.id }, desc: false }]);

function sortError(position: number, message: string, details: Record<string, unknown> = {}): AppError {
  return new AppError('INVALID_REQUEST', `Invalid sort at position ${position}: ${message}.`, { field: 'querystring.sort', position, ...details });
}

export function parseSort(text: string | undefined): SortKey[] {
  if (text === undefined || text.trim() === '') return [...DEFAULT_SORT];
  if (text.length > MAX_SORT_LENGTH) throw sortError(MAX_SORT_LENGTH, `a sort has at most ${MAX_SORT_LENGTH} characters`, { limit: MAX_SORT_LENGTH });
  const keys: SortKey[] = [];
  let start = 0;
  for (const item of text.split(',')) {
    const leading = item.length - item.trimStart().length;
    const position = start + leading;
    start += item.length + 1;
    const trimmed = item.trim();
    if (trimmed === '') throw sortError(position, 'expected a field between the commas', { expected: 'a field' });
    const desc = trimmed.startsWith('-');
    const name = desc ? trimmed.slice(1) : trimmed;
    const parsed = parseFieldRef(name);
    if (!parsed.ok) throw sortError(desc ? position + 1 : position, parsed.reason, { expected: 'a field', found: name });
    if (keys.some((key) => key.field.name === parsed.field.name)) {
      throw sortError(position, `${parsed.field.name} appears twice`);
    }
    if (keys.length === MAX_SORT_KEYS) throw sortError(position, `a sort has at most ${MAX_SORT_KEYS} fields`, { limit: MAX_SORT_KEYS });
    keys.push({ field: parsed.field, desc });
  }
  return keys;
}

/** The canonical text of a sort (what parseSort reads back to the same keys). */
export function formatSort(sort: readonly SortKey[]): string {
  return sort.map((key) => `${key.desc ? '-' : ''}${key.field.name}`).join(',');
}
