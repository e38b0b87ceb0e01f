import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

// PostgreSQL only: record indexes no longer start with collection_id (see
// Dialect.recordIndexesLeadWithCollection). Each index is a partial index of its own collection,
// so the column is constant within it; PostgreSQL leaves the query's `collection_id = ?` out of
// the index conditions because the predicate implies it, and then prices the index as a walk of
// all of it. On a large, analysed collection a filtered list became a scan of the table.
//
// Each index is rebuilt from its own definition (pg_indexes.indexdef) with the leading column
// taken out (down: put back), so its other columns stay exactly what the app's queries were
// written against. Uniqueness is unchanged: the predicate already limits each index to one
// collection. Kysely's migrator runs a PostgreSQL migration in one transaction, so a failure
// leaves every index as it was. SQLite keeps the column: nothing to do there.

const LEADING = 'USING btree (collection_id, ';
const WITHOUT = 'USING btree (';

export async function up(db: Kysely<any>): Promise<void> {
  await rebuild(db, (definition) => (definition.includes(LEADING) ? definition.replace(LEADING, WITHOUT) : null));
}

export async function down(db: Kysely<any>): Promise<void> {
  await rebuild(db, (definition) => (definition.includes(LEADING) ? null : definition.replace(WITHOUT, LEADING)));
}

/** Rebuilds each record index whose definition `change` rewrites (null: leave it as it is). */
async function rebuild(db: Kysely<any>, change: (definition: string) => string | null): Promise<void> {
  if (dialectOf(db).engine !== 'postgres') return;
  const indexes = await db.selectFrom('record_indexes').select('sql_name').orderBy('sql_name').execute() as { sql_name: string }[];
  for (const { sql_name: name } of indexes) {
    const { rows } = await sql<{ definition: string }>`select indexdef as definition from pg_indexes where schemaname = current_schema() and indexname = ${name}`.execute(db);
    // An index whose row outlived it (dropped by hand): nothing to rebuild; the app drops such rows.
    const changed = rows[0] ? change(rows[0].definition) : null;
    if (changed === null) continue;
    await sql`drop index ${sql.id(name)}`.execute(db);
    await sql.raw(changed).execute(db);
  }
}
