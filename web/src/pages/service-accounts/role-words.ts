import type { ServiceAccount } from '../../api-types.js';

/** The roles a service account may have (never owner), with what each allows, for the role pickers. */
export const ACCOUNT_ROLES: { role: ServiceAccount['role']; words: string }[] = [
  { role: 'viewer', words: 'Viewer: reads collections, records, schemas and files' },
  { role: 'editor', words: 'Editor: also writes records, files, collections and schemas' },
  { role: 'admin', words: 'Admin: everything an editor can; its keys still cannot manage people, keys or webhooks' },
];
