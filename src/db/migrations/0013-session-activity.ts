import { sql, type Kysely } from 'kysely';

// Sessions a person can see and end one by one, and that end when left unused
// (modules/sessions/sessions.ts): each gets an id that is not its secret, the time it was last
// used, and the address and browser that last used it. Sessions open before this migration keep
// working: their id is made from their digest (not the token, which is never stored), and they
// count as last used when they were opened.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('id', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('sessions').addColumn('last_used_at', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('sessions').addColumn('ip', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('user_agent', 'text').execute();
  await sql`update sessions set id = 'ses_' || substr(token_hash, 1, 26), last_used_at = created_at`.execute(db);
  await db.schema.createIndex('sessions_id').on('sessions').column('id').unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('sessions_id').execute();
  for (const column of ['user_agent', 'ip', 'last_used_at', 'id']) await db.schema.alterTable('sessions').dropColumn(column).execute();
}
