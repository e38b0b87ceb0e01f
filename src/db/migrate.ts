import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import { dialectOf } from './dialect.js';
import type { Storage } from './connect.js';
import type { Db } from './schema.js';
import * as foundation from './migrations/0001-foundation.js';
import * as data from './migrations/0002-data.js';
import * as keys from './migrations/0003-keys.js';
import * as webhooks from './migrations/0004-webhooks.js';
import * as files from './migrations/0005-files.js';
import * as lighterOutbox from './migrations/0006-lighter-outbox.js';
import * as eventData from './migrations/0007-event-data.js';
import * as indexesPerCollection from './migrations/0008-indexes-per-collection.js';
import * as eventSequence from './migrations/0010-event-sequence.js';
import * as postgresIndexKeys from './migrations/0011-postgres-index-keys.js';
import * as postgresPendingEvents from './migrations/0012-postgres-pending-events.js';
import * as sessionActivity from './migrations/0013-session-activity.js';
import * as fairFanOut from './migrations/0014-fair-fan-out.js';
import * as postgresLiveRecords from './migrations/0015-postgres-live-records.js';
import * as submissionCounts from './migrations/0016-submission-counts.js';
import * as recordVersions from './migrations/0017-record-versions.js';
import * as recordVersionsByActor from './migrations/0018-record-versions-by-actor.js';
import * as backupRuns from './migrations/0019-backup-runs.js';
import * as recordSearch from './migrations/0020-record-search.js';
import * as deliveryLogRetention from './migrations/0021-delivery-log-retention.js';
import * as searchWordsKeepMarks from './migrations/0022-search-words-keep-marks.js';
import * as webhookHealth from './migrations/0023-webhook-health.js';
import * as searchTriggersWhenSearched from './migrations/0024-search-triggers-when-searched.js';

/**
 * Migrations in order. Each file is imported here, not discovered on disk, so a build or a
 * bundler cannot lose one. Kysely takes a lock (an advisory lock on PostgreSQL), so two processes
 * starting at once run each migration once.
 */
const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
  '0002-data': data,
  '0003-keys': keys,
  '0004-webhooks': webhooks,
  '0005-files': files,
  '0006-lighter-outbox': lighterOutbox,
  '0007-event-data': eventData,
  '0008-indexes-per-collection': indexesPerCollection,
  '0010-event-sequence': eventSequence,
  '0011-postgres-index-keys': postgresIndexKeys,
  '0012-postgres-pending-events': postgresPendingEvents,
  '0013-session-activity': sessionActivity,
  '0014-fair-fan-out': fairFanOut,
  '0015-postgres-live-records': postgresLiveRecords,
  '0016-submission-counts': submissionCounts,
  '0017-record-versions': recordVersions,
  '0018-record-versions-by-actor': recordVersionsByActor,
  '0019-backup-runs': backupRuns,
  '0020-record-search': recordSearch,
  '0021-delivery-log-retention': deliveryLogRetention,
  '0022-search-words-keep-marks': searchWordsKeepMarks,
  '0023-webhook-health': webhookHealth,
  '0024-search-triggers-when-searched': searchTriggersWhenSearched,
};


const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Kysely's migrator over Plainbase's migrations (tests use it to stop at, or go back to, one). */
export async function migratorFor(db: Db): Promise<Migrator> {
  return new Migrator({
    db,
    provider,
    migrationTableName: 'plainbase_migrations',
    migrationLockTableName: 'plainbase_migrations_lock',
    // Kysely looks for its tables in every schema unless told which: another Plainbase (or a test)
    // in a sibling schema of the same database must not count as ours. (On PostgreSQL it is only
    // shown the schema in use anyway: postgres-introspector.ts.)
    migrationTableSchema: await dialectOf(db).currentSchema(db),
  });
}

export async function migrateToLatest(db: Db): Promise<string[]> {
  const { error, results } = await (await migratorFor(db)).migrateToLatest();
  if (!error) return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
  const failed = results?.find((result) => result.status === 'Error');
  throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${(error as Error).message}`);
}

/**
 * Migrates through the storage's migration connection: behind a transaction-mode pooler that is a
 * one-off direct connection (connect.ts), where the migration lock and the DDL keep one session.
 */
export async function migrateStorage(storage: Storage): Promise<string[]> {
  const connection = await storage.openMigrationConnection();
  try {
    return await migrateToLatest(connection.db);
  } finally {
    await connection.close();
  }
}
