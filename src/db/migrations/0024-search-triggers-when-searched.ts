import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

// The search triggers of migration 0020 run only while some collection has searchFields
// (modules/collections/search-triggers.ts turns them on and off as settings change): a database where
// none has them stops paying for them here. On PostgreSQL the trigger is disabled, on SQLite the
// insert and update triggers are dropped (their delete trigger always runs). No collection can
// change its settings while the migrations run.
export async function up(db: Kysely<any>): Promise<void> {
  const searched = await db.selectFrom('collections').select('id').where('settings', 'like', '%"searchFields":%').limit(1).executeTakeFirst();
  if (searched) return;
  if (dialectOf(db).engine === 'sqlite') {
    for (const name of ['records_search_insert', 'records_search_update']) await sql`drop trigger if exists ${sql.id(name)}`.execute(db);
  } else {
    await sql`alter table records disable trigger records_search`.execute(db);
  }
}

// Back to 0020's triggers, running for every record whatever the settings.
export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of dialectOf(db).switchSearchTriggers(true)) await statement.execute(db);
}
