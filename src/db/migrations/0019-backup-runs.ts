import type { Kysely } from 'kysely';

// Backups taken by the service (modules/backups/backup-runs.ts): one row per backup, keyed by its
// archive's name. A scheduled backup's name comes from its scheduled time, so the processes that
// all wake for one tick insert the same row and only the one whose insert lands takes it.
// `running` is 1 while a backup is being written and null after: its unique index lets at most
// one run at a time over every process (NULLs never collide, on either engine).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('backup_runs')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('running', 'integer')
    .addColumn('person_id', 'text')
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('alive_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .addColumn('failure', 'text')
    .execute();
  await db.schema.createIndex('backup_runs_running').on('backup_runs').column('running').unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('backup_runs').execute();
}
