import type { SearchSql } from '../../db/dialect.js';
import type { CollectionsTable } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { AppError, invalidRequest } from '../../errors.js';
import { storedSettings } from '../collections/collections.js';
import { parseSearchBuild, storedSearchFields } from '../collections/search-settings.js';
import { parseSearch } from './search-terms.js';

/**
 * A list's `?search=` on a collection, as SQL for the list query (records/query/list.ts): refused
 * (400) when the collection has no settings.searchFields, and (409) while its index is being built,
 * rather than answering from part of the records as if it were all of them.
 */
export function searchOf(deps: Pick<Deps, 'dialect'>, collection: Pick<CollectionsTable, 'settings' | 'search_build'>, text: string): SearchSql {
  if (!storedSearchFields(storedSettings(collection))) {
    throw invalidRequest('This collection has no settings.searchFields: set the data paths to search in (PATCH the collection) before ?search=.', { field: 'querystring.search' });
  }
  const terms = parseSearch(text);
  const build = parseSearchBuild(collection.search_build);
  if (build) {
    throw new AppError('CONFLICT', `The collection's search index is being built (${build.indexed} of ${build.total} records so far); GET the collection shows search.state, and ?search= works once it is ready.`, {
      indexed: build.indexed,
      total: build.total,
    });
  }
  return deps.dialect.search(terms);
}
