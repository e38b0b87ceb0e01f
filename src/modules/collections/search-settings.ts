import { JSON_PATH_SEGMENT } from '../../db/dialect.js';
import type { CollectionsTable } from '../../db/schema.js';
import { invalidRequest } from '../../errors.js';

/**
 * settings.searchFields: the data paths whose text full-text search looks in (modules/search/).
 * The paths are kept in the settings as written (`data.title`); the triggers of migration 0020
 * read them from there for every record written, and `search_build` holds the progress of
 * indexing the records that were there before (null once done).
 */

/** Most paths a collection searches: each is text extracted for every record written. */
export const MAX_SEARCH_FIELDS = 10;
/** As a filter's paths (records/query/field-ref.ts): segments are identifiers, so SQL may inline them. */
const MAX_SEGMENTS = 16;
const MAX_SEGMENT_LENGTH = 64;

/** The searched paths as stored, or null when the collection has none. */
export function storedSearchFields(stored: Record<string, unknown>): string[] | null {
  const fields = Object.hasOwn(stored, 'searchFields') ? stored.searchFields : undefined;
  return Array.isArray(fields) && fields.length > 0 && fields.every((field) => typeof field === 'string') ? (fields as string[]) : null;
}

/** Checks what a create or update sent: null or [] turns search off; otherwise 1 to 10 distinct data paths. */
export function checkedSearchFields(input: readonly string[] | null): string[] | null {
  if (input === null || input.length === 0) return null;
  const field = 'body.settings.searchFields';
  if (input.length > MAX_SEARCH_FIELDS) throw invalidRequest(`settings.searchFields holds at most ${MAX_SEARCH_FIELDS} paths.`, { field });
  input.forEach((text, i) => {
    const [head, ...path] = text.split('.');
    const valid = head === 'data' && path.length >= 1 && path.length <= MAX_SEGMENTS && path.every((segment) => JSON_PATH_SEGMENT.test(segment) && segment.length <= MAX_SEGMENT_LENGTH);
    if (!valid) {
      throw invalidRequest(`settings.searchFields[${i}]: ${JSON.stringify(text)} is not a data path like data.title (letters, digits and _ in each part, at most ${MAX_SEGMENTS} parts).`, { field: `${field}[${i}]` });
    }
    if (input.indexOf(text) !== i) throw invalidRequest(`settings.searchFields[${i}]: ${text} appears twice.`, { field: `${field}[${i}]` });
  });
  return [...input];
}

/** A search index build's progress, as collections.search_build holds it. */
export interface SearchBuild {
  /** Records indexed so far. */
  indexed: number;
  /** Records the collection held when the build began. */
  total: number;
  /** The last record id indexed (the build goes in id order); null before the first. */
  after: string | null;
}

export function parseSearchBuild(text: string | null): SearchBuild | null {
  if (text === null) return null;
  const parsed = JSON.parse(text) as SearchBuild;
  return { indexed: Number(parsed.indexed) || 0, total: Number(parsed.total) || 0, after: typeof parsed.after === 'string' ? parsed.after : null };
}

/** What a collection's answer shows of its search index: only when it has searchFields. */
export interface SearchView {
  state: 'building' | 'ready';
  /** While building: records indexed so far, of `total`. */
  indexed?: number;
  total?: number;
}

export function searchView(row: Pick<CollectionsTable, 'search_build'>, fields: string[] | null): SearchView | undefined {
  if (!fields) return undefined;
  const build = parseSearchBuild(row.search_build);
  return build ? { state: 'building', indexed: build.indexed, total: build.total } : { state: 'ready' };
}
