import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

// Record indexes become partial indexes of their own collection's rows (modules/indexes): made
// over the whole `records` table, a unique index of one collection refused duplicates within
// every other collection of every workspace, and could not be made while any of them had some.
//
// Each index is rebuilt from its own definition as the engine keeps it (sqlite_master.sql,
// pg_indexes.indexdef), with `where collection_id = '<its collection>'` added (down: taken off),
// so its columns stay exactly what the app's queries were written against. A collection whose
// records break a unique index's rule cannot exist (the index refused them all along), so the
// rebuild finds no duplicates; going down can, when another collection has gained duplicates
// since, and then fails whole: every index is as it was before (Kysely's migrator runs a
// PostgreSQL migration in a transaction; on SQLite this one opens its own).

interface IndexRow {
  sql_name: string;
  collection_id: string;
}

/** Our own collection ids only: DDL takes no parameters, so the id is written in as a literal. */
const COLLECTION_ID = /^col_[0-9a-z]{26}$/;

export async function up(db: Kysely<any>): Promise<void> {
  await rebuild(db, (definition, collectionId) => `${definition} where "collection_id" = '${collectionId}'`);
}

export async function down(db: Kysely<any>): Promise<void> {
  await rebuild(db, (definition) => {
    const at = definition.toLowerCase().lastIndexOf(' where ');
    return at < 0 ? definition : definition.slice(0, at);
  });
}

async function rebuild(db: Kysely<any>, change: (definition: string, collectionId: string) => string): Promise<void> {
  const indexes = await db.selectFrom('record_indexes').select(['sql_name', 'collection_id']).orderBy('sql_name').execute() as IndexRow[];
  const inTransaction = (work: (trx: Kysely<any>) => Promise<void>) => (db.isTransaction ? work(db) : db.transaction().execute(work));
  await inTransaction(async (trx) => {
    for (const { sql_name: name, collection_id: collectionId } of indexes) {
      if (!COLLECTION_ID.test(collectionId)) throw new Error(`record index ${name}: ${JSON.stringify(collectionId)} is not a collection id`);
      const definition = await definitionOf(trx, name);
      // An index whose row outlived it (dropped by hand): nothing to rebuild; the app drops such rows.
      if (definition === null) continue;
      await sql`drop index ${sql.id(name)}`.execute(trx);
      await sql.raw(change(definition, collectionId)).execute(trx);
    }
  });
}

async function definitionOf(db: Kysely<any>, name: string): Promise<string | null> {
  const { rows } = dialectOf(db).engine === 'postgres'
    ? await sql<{ definition: string }>`select indexdef as definition from pg_indexes where schemaname = current_schema() and indexname = ${name}`.execute(db)
    : await sql<{ definition: string }>`select sql as definition from sqlite_master where type = 'index' and name = ${name}`.execute(db);
  return rows[0]?.definition ?? null;
}
