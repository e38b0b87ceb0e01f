import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { checkedPath, checkedSearchWords, driverError, driverErrorCode, rankLiteral, type Dialect, type JsonScalar } from './dialect.js';
import { insertValues } from './insert-rows.js';
import { SQLITE_BUDGET_FUNCTION, SqliteBudgetSpent } from './statement-budget.js';
import { SQLITE_TIME_BUCKET_FUNCTION } from './time-buckets.js';

/** SQLite through better-sqlite3: one connection, in this process, answering synchronously. */
export const sqliteDialect: Dialect = {
  engine: 'sqlite',
  isUniqueViolation: (error) => {
    const code = driverErrorCode(error);
    return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  },
  isUnavailable: (error) => {
    const cause = driverError(error);
    const code = driverErrorCode(cause);
    return code === 'SQLITE_BUSY' || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_IOERR' ||
      (cause instanceof TypeError && /database connection is not open/.test(cause.message));
  },
  isUnreadableJson: (error) => {
    const cause = driverError(error);
    return driverErrorCode(cause) === 'SQLITE_ERROR' && (cause as Error).message === 'malformed JSON';
  },
  unreadableJson: sql<SqlBool>`json_valid(${sql.ref('data')}) = 0`,
  isStatementTimeout: (error) => driverError(error) instanceof SqliteBudgetSpent,
  // The zones are the runtime's own (time-buckets.ts), which checked the name.
  isUnknownTimeZone: () => false,
  statementTimeout: null,
  beginWithStatementTimeout: null,
  // One row in 64 on average calls the budget's clock (statement-budget.ts says why).
  statementBudgetCheck: sql<SqlBool>`((random() & 63) <> 0 or ${sql.raw(SQLITE_BUDGET_FUNCTION)}())`,
  currentSchema: async () => undefined,
  ping: sql`select 1`,
  readJson: (value) => JSON.parse(value as string),
  jsonText: (value) => value as string,
  jsonArrayTexts: (parameter) => `select value from json_each(${parameter})`,
  notifyEvents: null,
  insertsTogether: null,
  notifyEventsSequenced: null,
  notifyRecordsErased: null,
  sequencingLock: null,
  housekeepingLock: null,
  // SQLite's planner does not estimate from sampled statistics this way: its plans held (bench:events).
  refreshStatistics: null,
  indexedBy: (index) => sql`indexed by ${sql.id(index)}`,
  preferIndexOrder: null,
  beginPreferringIndexOrder: null,
  // Nobody else writes this database: there is nothing to hear.
  listen: () => () => undefined,
  supportsSkipLocked: false,
  supportsRowLocks: false,
  groupsCommits: true,
  readsSynchronously: true,
  statementsRoundTrip: false,
  streamsInBatches: false,
  // SQLite has no COPY, and needs none: its statements run in this process, with no protocol to save.
  prepareRows: (table, columns, values) => ({ write: (executor) => insertValues(executor, table, columns, values) }),
  parameter: () => '?',
  numberedParameters: false,
  jsonSortKey: (path) => {
    // json_type tells integer from real and true from false, where PostgreSQL says number and boolean.
    const where = sqlitePath(path);
    const type = sql`json_type(${sql.ref('data')}, ${where})`;
    const value = sql`json_extract(${sql.ref('data')}, ${where})`;
    return {
      rank: sql<number | null>`(case ${type} when 'integer' then ${rankLiteral('number')} when 'real' then ${rankLiteral('number')} when 'text' then ${rankLiteral('string')} when 'true' then ${rankLiteral('boolean')} when 'false' then ${rankLiteral('boolean')} when 'array' then ${rankLiteral('array')} when 'object' then ${rankLiteral('object')} end)`,
      text: sql<string | null>`(case ${type} when 'integer' then '' when 'real' then '' when 'text' then ${value} when 'true' then 'true' when 'false' then 'false' end)`,
      number: sql<number | null>`(case ${type} when 'integer' then ${value} when 'real' then ${value} when 'text' then 0 when 'true' then 0 when 'false' then 0 end)`,
    };
  },
  jsonArrayHasElement: (path, element) => {
    const where = sqlitePath(path);
    // Qualified: inside the subquery an unqualified name could resolve to json_each's own columns.
    const data = sql.ref('records.data');
    return sql<SqlBool>`(json_type(${data}, ${where}) = 'array' and exists (select 1 from json_each(${data}, ${where}) as element where ${sqliteElementIs(element)}))`;
  },
  textContains: (haystack, needle) => sql<SqlBool>`(instr(${haystack}, ${needle}) > 0)`,
  // SQLite's own lower() folds A–Z only (without the ICU extension, which better-sqlite3 does not load).
  foldAsciiCase: (text) => sql<string | null>`lower(${text})`,
  // SQLite has no time zones: the connection's own function asks the runtime's (time-buckets.ts).
  timeBucket: (column, unit, zone) => sql<string>`${sql.raw(SQLITE_TIME_BUCKET_FUNCTION)}(${sql.ref(column)}, ${sql.lit(unit)}, ${zone})`,
  doubleOf: (number) => sql<number | null>`cast(${number} as real)`,
  search: (terms) => {
    // FTS5's query language: each term a quoted string of words ("a b" is a phrase, "a b"* its last word a prefix), all of them required.
    const text = checkedSearchWords(terms).map((term) => `"${term.words.join(' ')}"${term.prefix ? '*' : ''}`).join(' AND ');
    // The matches highlight() marks in the record's text (one char(2) each), per character of it; bm25 would weigh by every workspace's records.
    const marked = sql`highlight(record_search, 0, char(2), '')`;
    return {
      matches: sql<SqlBool>`records.rowid in (select rowid from record_search where record_search match ${text})`,
      // The unary + keeps SQLite from looking the full-text row up per record: the MATCH leads, the records follow by rowid.
      joinOn: sql<SqlBool>`records.rowid = +record_search.rowid`,
      joinedMatch: sql<SqlBool>`record_search match ${text}`,
      score: sql<number>`((length(${marked}) - length(replace(${marked}, char(2), ''))) * 1.0 / (length(record_search.body) + 50))`,
      scoreValue: (value) => sql<number>`${value}`,
    };
  },
  searchReindex: ({ collectionId, after, last }) => {
    const batch = sql`records.collection_id = ${collectionId} and records.id > ${after} and records.id <= ${last}`;
    // As the trigger records_search_insert writes it, with the record's data for new.data.
    const text = sql.raw(`coalesce((select group_concat(json_extract(records.data, '$' || substr(f.value, 5)), ' ') from json_each(c.settings, '$.searchFields') f), '')`);
    return [
      sql`delete from record_search where rowid in (select rowid from records where ${batch})`,
      sql`insert into record_search (rowid, body) select records.rowid, ${text} from records join collections c on c.id = records.collection_id
          where ${batch} and json_type(c.settings, '$.searchFields') = 'array'`,
    ];
  },
  searchTriggersRunning: sql<{ running: number }>`select count(*) as running from sqlite_master where type = 'trigger' and name = 'records_search_insert'`,
  switchSearchTriggers: (on) => (on ? sqliteSearchTriggers() : ['records_search_insert', 'records_search_update'].map((name) => sql`drop trigger if exists ${sql.id(name)}`)),
  searchTriggersLock: null,
  nullsFirstIndexColumn: (expression) => sql`${expression}`,
  recordIndexesLeadWithCollection: true,
  preparesRecordQueries: false,
};

/**
 * The triggers that write a record's search row as it is inserted or changed, as migration 0020
 * made them: switchSearchTriggers turns them on and off. Its third, records_search_delete, always runs:
 * a search row left behind by a deleted record would belong to the next record given its rowid.
 */
function sqliteSearchTriggers(): RawBuilder<unknown>[] {
  // The searched text of a record: the values at the paths, in order, objects and arrays as JSON text.
  const text = sql.raw(`coalesce((select group_concat(json_extract(new.data, '$' || substr(f.value, 5)), ' ') from json_each(c.settings, '$.searchFields') f), '')`);
  const searched = sql.raw(`(select json_type(settings, '$.searchFields') from collections where id = new.collection_id) = 'array'`);
  return [
    sql`create trigger if not exists records_search_insert after insert on records when ${searched} begin
      insert into record_search (rowid, body) select new.rowid, ${text} from collections c where c.id = new.collection_id;
    end`,
    sql`create trigger if not exists records_search_update after update of data on records when ${searched} begin
      delete from record_search where rowid = old.rowid;
      insert into record_search (rowid, body) select new.rowid, ${text} from collections c where c.id = new.collection_id;
    end`,
  ];
}

const sqlitePath = (path: readonly string[]) => sql.lit(`$.${checkedPath(path).join('.')}`);

function sqliteElementIs(element: JsonScalar): RawBuilder<SqlBool> {
  if (element === null) return sql<SqlBool>`element.type = 'null'`;
  if (typeof element === 'boolean') return sql<SqlBool>`element.type = ${sql.lit(String(element))}`;
  if (typeof element === 'number') return sql<SqlBool>`element.type in ('integer', 'real') and element.value = ${element}`;
  return sql<SqlBool>`element.type = 'text' and element.value = ${element}`;
}
