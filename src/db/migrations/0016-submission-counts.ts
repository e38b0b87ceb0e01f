import type { Kysely } from 'kysely';

// Public submissions counted per collection and hour, accepted and refused by reason, for the
// dashboard's chart (modules/submissions/submission-counts.ts). Counts are gathered in memory and
// added here every few seconds, so a flood of refused requests is a handful of upserts, not a
// write each. Rows go with their collection and after 7 days.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('submission_counts')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('collection_id', 'text', (c) => c.notNull())
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('accepted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('origin_not_allowed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rate_limited', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('captcha_failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('honeypot', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('too_large', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('invalid', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('submission_counts_pkey', ['workspace_id', 'collection_id', 'hour'])
    .execute();
  await db.schema.createIndex('submission_counts_hour').on('submission_counts').column('hour').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('submission_counts').execute();
}
