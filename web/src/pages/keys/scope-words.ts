/** What each scope allows, in the words of docs/api-keys.md, for the checkboxes of the key form. */
export const SCOPE_WORDS: Record<string, string> = {
  'collections:read': 'list collections and read their settings',
  'collections:create': 'create collections',
  'collections:update': 'change collection settings',
  'collections:delete': 'trash, restore and delete collections',
  'records:read': 'read, query and export records',
  'records:create': 'add records (also by import)',
  'records:update': 'change records',
  'records:delete': 'trash and restore records',
  'schemas:read': 'read schema versions',
  'schemas:write': 'create, activate and switch off schema versions',
  'files:read': 'download files',
  'files:write': 'upload, attach, detach and delete files',
};
