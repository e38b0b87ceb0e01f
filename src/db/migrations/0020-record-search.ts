import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

// Full-text search (modules/search/): a collection's settings.searchFields lists the data paths
// whose text is searched. Their text is kept in `record_search`, one row per record of such a
// collection, written by triggers on `records`, so every way a record is written (one at a time,
// imports, bulk changes, restores) keeps it up to date, and a delete (for good, or of the whole
// collection) removes it. The trash keeps its rows: a restored record is found again at once.
//
//   SQLite      an FTS5 table, its rowid the record's rowid (no VACUUM renumbers it: Plainbase
//               never runs one); unicode61 without removing diacritics, as PostgreSQL's 'simple'.
//   PostgreSQL  record_search(record_id, tsv) with a GIN index over the 'simple' configuration.
//
// Existing records are indexed in the background when searchFields change; collections.search_build
// holds that build's progress (JSON), null once it is done.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('collections').addColumn('search_build', 'text').execute();
  if (dialectOf(db).engine === 'sqlite') {
    await sql`create virtual table record_search using fts5(body, tokenize = 'unicode61 remove_diacritics 0')`.execute(db);
    // The searched text of a record: the values at the paths, in order, objects and arrays as JSON text.
    const text = sql.raw(`coalesce((select group_concat(json_extract(new.data, '$' || substr(f.value, 5)), ' ') from json_each(c.settings, '$.searchFields') f), '')`);
    const searched = sql.raw(`(select json_type(settings, '$.searchFields') from collections where id = new.collection_id) = 'array'`);
    await sql`create trigger records_search_insert after insert on records when ${searched} begin
      insert into record_search (rowid, body) select new.rowid, ${text} from collections c where c.id = new.collection_id;
    end`.execute(db);
    await sql`create trigger records_search_update after update of data on records when ${searched} begin
      delete from record_search where rowid = old.rowid;
      insert into record_search (rowid, body) select new.rowid, ${text} from collections c where c.id = new.collection_id;
    end`.execute(db);
    // Whatever the collection's settings: no row may outlive its record (a later record could take its rowid).
    await sql`create trigger records_search_delete after delete on records begin
      delete from record_search where rowid = old.rowid;
    end`.execute(db);
    return;
  }
  await db.schema
    .createTable('record_search')
    .addColumn('record_id', 'text', (c) => c.primaryKey())
    .addColumn('tsv', sql`tsvector`, (c) => c.notNull())
    .execute();
  await sql`create index record_search_tsv on record_search using gin (tsv)`.execute(db);
  // The searched text of a record: the values at the paths, in order, objects and arrays as JSON
  // text. ASCII punctuation becomes space, so words split where SQLite's unicode61 splits them:
  // PostgreSQL's parser would keep ada@example.com, a URL or 3.14 as one word no search could name.
  await sql.raw(`create function plainbase_search_text(data jsonb, fields jsonb) returns text language sql immutable as $$
    select regexp_replace(coalesce(string_agg(data #>> string_to_array(substr(f, 6), '.'), ' ' order by n), ''), '[[:punct:]]+', ' ', 'g')
      from jsonb_array_elements_text(fields) with ordinality as t(f, n)
  $$`).execute(db);
  await sql.raw(`create function plainbase_record_search() returns trigger language plpgsql as $$
    declare fields jsonb;
    begin
      if tg_op = 'DELETE' then
        delete from record_search where record_id = old.id;
        return null;
      end if;
      select settings::jsonb -> 'searchFields' into fields from collections where id = new.collection_id;
      if fields is null or jsonb_typeof(fields) <> 'array' then return null; end if;
      insert into record_search (record_id, tsv) values (new.id, to_tsvector('simple', plainbase_search_text(new.data, fields)))
        on conflict (record_id) do update set tsv = excluded.tsv;
      return null;
    end
  $$`).execute(db);
  await sql`create trigger records_search after insert or delete or update of data on records for each row execute function plainbase_record_search()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db).engine === 'sqlite') {
    for (const name of ['records_search_insert', 'records_search_update', 'records_search_delete']) await sql`drop trigger if exists ${sql.id(name)}`.execute(db);
  } else {
    await sql`drop trigger if exists records_search on records`.execute(db);
    await sql`drop function if exists plainbase_record_search()`.execute(db);
    await sql`drop function if exists plainbase_search_text(jsonb, jsonb)`.execute(db);
  }
  await db.schema.dropTable('record_search').execute();
  await db.schema.alterTable('collections').dropColumn('search_build').execute();
}
