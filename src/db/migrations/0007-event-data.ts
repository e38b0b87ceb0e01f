import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

// The outbox keeps each event's data, not its whole message: the rest of the message (id, type,
// time, workspace, collection) is in the row's own columns, and storing it twice made the outbox
// the larger half of a bulk import's writes. The worker puts the message together when it
// delivers (eventMessageText in modules/events/outbox.ts), byte for byte as it was stored before.
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = dialectOf(db).engine === 'postgres';
  // SQLite can add a NOT NULL column only with a default; there the app sees to it.
  await db.schema.alterTable('events').addColumn('data', 'text').execute();
  // A message is {"id":…,"type":…,"createdAt":…,"workspaceId":…,"collectionId":…,"data":…}, and
  // nothing before its data can contain `,"data":` (ids, a type and a time): the data is what
  // follows the first one, up to the closing brace.
  const at = postgres ? sql`strpos(message, ',"data":')` : sql`instr(message, ',"data":')`;
  await sql`update events set data = substr(message, ${at} + 8, length(message) - ${at} - 8)`.execute(db);
  if (postgres) await db.schema.alterTable('events').alterColumn('data', (c) => c.setNotNull()).execute();
  await db.schema.alterTable('events').dropColumn('message').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = dialectOf(db).engine === 'postgres';
  await db.schema.alterTable('events').addColumn('message', 'text').execute();
  // Nothing in an id, a type or an ISO time needs escaping in JSON.
  await sql`update events set message = '{"id":"' || id || '","type":"' || type || '","createdAt":"' || created_at
    || '","workspaceId":"' || workspace_id || '","collectionId":"' || collection_id || '","data":' || data || '}'`.execute(db);
  if (postgres) await db.schema.alterTable('events').alterColumn('message', (c) => c.setNotNull()).execute();
  await db.schema.alterTable('events').dropColumn('data').execute();
}
