import { JSON_PATH_SEGMENT } from '../../../db/dialect.js';
import { columnOf, RECORD_QUERYABLE } from '../record-shape.js';

/**
 * The names a filter, a sort or an index may use for a record's values: `data.<path>` for a field
 * of the record's JSON data, or one of the record's own columns.
 */

type Queryable = (typeof RECORD_QUERYABLE)[number];

/** The record columns a query may name (RECORD_QUERYABLE), and the table column behind each. */
export const QUERYABLE_COLUMNS = Object.fromEntries(RECORD_QUERYABLE.map((name) => [name, columnOf(name)])) as { readonly [K in Queryable]: ReturnType<typeof columnOf<K>> };

export type ColumnName = Queryable;

export type FieldRef =
  | { kind: 'column'; name: ColumnName; column: (typeof QUERYABLE_COLUMNS)[ColumnName] }
  /** `name` is the text as written (`data.address.city`), `path` its segments after `data`. */
  | { kind: 'data'; name: string; path: string[] };

export const MAX_PATH_SEGMENTS = 16;
export const MAX_SEGMENT_LENGTH = 64;

/** Why a field name was refused, for the caller's error message; or the field. */
export type FieldRefResult = { ok: true; field: FieldRef } | { ok: false; reason: string };

export function parseFieldRef(text: string): FieldRefResult {
  if (Object.hasOwn(QUERYABLE_COLUMNS, text)) {
    const name = text as ColumnName;
    return { ok: true, field: { kind: 'column', name, column: QUERYABLE_COLUMNS[name] } };
  }
  const [head, ...path] = text.split('.');
  if (head !== 'data') {
    return { ok: false, reason: `unknown field '${text}'; fields are data.<path>, id, createdAt and updatedAt` };
  }
  if (path.length === 0) return { ok: false, reason: `'data' needs a path, like data.name` };
  if (path.length > MAX_PATH_SEGMENTS) return { ok: false, reason: `a path has at most ${MAX_PATH_SEGMENTS} segments` };
  for (const segment of path) {
    // An identifier: what makes it safe for the dialect to inline the path into SQL as a literal.
    if (!JSON_PATH_SEGMENT.test(segment)) {
      return { ok: false, reason: `'${segment}' is not a valid path segment (letters, digits and _, not starting with a digit)` };
    }
    if (segment.length > MAX_SEGMENT_LENGTH) return { ok: false, reason: `a path segment has at most ${MAX_SEGMENT_LENGTH} characters` };
  }
  return { ok: true, field: { kind: 'data', name: text, path } };
}

/** The value a field has in a record: a column value, or the JSON value at the path (undefined when missing). */
export function fieldValueOf(field: FieldRef, row: { id: string; created_at: string; updated_at: string }, data: unknown): unknown {
  if (field.kind === 'column') return row[field.column];
  let value: unknown = data;
  for (const segment of field.path) {
    // hasOwn, not `in`: a path like data.constructor must not reach into the prototype.
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}
