import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

// PostgreSQL's searched text (0020, plainbase_search_text) turned `[[:punct:]]` into spaces, so that
// words split at punctuation as SQLite's unicode61 splits them. Under a UTF-8 locale that class also
// holds combining marks: a decomposed `e\u0301cole`, or Hindi's vowel signs (`हिन्दी`), were cut
// into pieces that no search names, while the search's own words keep their marks. Only ASCII
// punctuation becomes space now, as docs/queries.md says. Every collection that searches is
// indexed again in the background (modules/search/search-builds.ts) from its first record; until
// then its ?search= answers 409. SQLite was right all along.
const ASCII_PUNCTUATION = '[!-/:-@[-`{-~]+';

export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db).engine === 'sqlite') return;
  await searchText(db, ASCII_PUNCTUATION);
  await sql`
    update collections set search_build = json_build_object('indexed', 0, 'total', counted.total, 'after', null)::text
    from (select collection_id, count(*) as total from records group by collection_id) counted
    where counted.collection_id = collections.id and jsonb_typeof(collections.settings::jsonb -> 'searchFields') = 'array'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db).engine === 'sqlite') return;
  await searchText(db, '[[:punct:]]+');
}

async function searchText(db: Kysely<any>, separators: string): Promise<void> {
  await sql.raw(`create or replace function plainbase_search_text(data jsonb, fields jsonb) returns text language sql immutable as $$
    select regexp_replace(coalesce(string_agg(data #>> string_to_array(substr(f, 6), '.'), ' ' order by n), ''), '${separators}', ' ', 'g')
      from jsonb_array_elements_text(fields) with ordinality as t(f, n)
  $$`).execute(db);
}
