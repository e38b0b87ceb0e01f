/** The API path of a collection, or of something under it: collectionPath('leads', 'records'). */
export function collectionPath(name: string, ...rest: string[]): string {
  return ['/v1/collections', encodeURIComponent(name), ...rest.map(encodeURIComponent)].join('/');
}

/** The dashboard path of a collection's page: pagePath('leads', 'records'). */
export function pagePath(name: string, page?: 'records' | 'summary' | 'schemas' | 'indexes' | 'files'): string {
  return `/collections/${encodeURIComponent(name)}${page ? `/${page}` : ''}`;
}

/** Collection names: the API checks them too; this only helps while typing. */
export const COLLECTION_NAME = /^[a-z][a-z0-9_]{0,62}$/;
export const COLLECTION_NAME_RULE = 'Lower-case letters, digits and _, starting with a letter; at most 63 characters.';
