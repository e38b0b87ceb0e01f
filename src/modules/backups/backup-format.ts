import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { z } from 'zod';
import { STORAGE_KEY } from '../../storage/file-store.js';
import { WEBHOOK_TABLES } from '../webhooks/restored-webhooks.js';

/**
 * The backup archive (docs/backups.md): a tar of
 *
 *   manifest.json           what is in it (BackupManifest)
 *   manifest.json.sha256    the manifest's own SHA-256, so a changed manifest is found too
 *   tables/<table>.ndjson   one JSON array per row, the values in the manifest's column order
 *   files/<storage key>     the content of every file a `files` row names
 *
 * Every value is as both engines store it (text, integers, 0/1 for booleans, JSON as text,
 * times as ISO 8601 text), so an archive of either engine restores into either.
 */
export const FORMAT = 'plainbase-backup';
export const FORMAT_VERSION = 1;
export const MANIFEST = 'manifest.json';
export const MANIFEST_SUM = 'manifest.json.sha256';

/**
 * Every table a backup holds, parents before the tables whose rows point at them, which is the
 * order a restore writes them in. Sessions are left out: a restore signs everyone out.
 */
export const BACKUP_TABLES = [
  'people',
  'workspaces',
  'memberships',
  'invites',
  'audit_log',
  'sign_in_throttle',
  'setup_tokens',
  'collections',
  'schema_versions',
  'record_indexes',
  'records',
  'record_versions',
  'files',
  'record_files',
  'file_deletions',
  'event_imports',
  'events',
  'idempotency_keys',
  'service_accounts',
  'api_keys',
  'api_key_secrets',
  ...WEBHOOK_TABLES,
  'submission_counts',
] as const;

/** Tables of the database a backup leaves out on purpose; any other table missing from the list above is an error. */
export const LEFT_OUT_TABLES = [
  'sessions',
  'backup_runs',
  'plainbase_migrations',
  'plainbase_migrations_lock',
  // The search index (migration 0020) and, on SQLite, FTS5's own tables behind it: the triggers
  // write it again as a restore writes the records.
  'record_search',
  ...['data', 'idx', 'content', 'docsize', 'config'].map((part) => `record_search_${part}`),
];

export const tablePart = (table: string): string => `tables/${table}.ndjson`;
export const filePart = (storageKey: string): string => `files/${storageKey}`;

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

/** Checked whole before anything is restored: an archive is input like any other. */
export const manifestSchema = z.strictObject({
  format: z.literal(FORMAT),
  formatVersion: z.literal(FORMAT_VERSION),
  createdAt: z.string(),
  /** The engine it was taken from: for people; a restore does not depend on it. */
  engine: z.enum(['sqlite', 'postgres']),
  /** The migrations applied to the database it was taken from, in order: the last is its level. */
  migrations: z.array(z.string()).min(1),
  tables: z.record(
    z.enum(BACKUP_TABLES),
    z.strictObject({ columns: z.array(z.string().regex(/^[a-z_][a-z0-9_]*$/)).min(1), rows: z.number().int().nonnegative(), sha256: sha256Hex }),
  ),
  files: z.array(z.strictObject({ storageKey: z.string().regex(STORAGE_KEY), size: z.number().int().nonnegative(), sha256: sha256Hex })),
});

export type BackupManifest = z.infer<typeof manifestSchema>;

export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
