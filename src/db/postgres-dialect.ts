import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { checkedPath, checkedSearchWords, driverError, driverErrorCode, rankLiteral, type Dialect, type NotificationChannel, type TableColumns } from './dialect.js';
import { prepareCopy } from './postgres-copy.js';
import type { TimeBucketUnit } from './time-buckets.js';

// PostgreSQL error classes 08 (connection exception) and 57P (operator intervention), plus the
// socket errors node reports before any PostgreSQL code exists.
const pgUnavailableCodes = /^(08|57P)|^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EPIPE)$/;

/**
 * PostgreSQL through pg: a pool of connections, shared with other processes. `url` is for the
 * connection LISTEN needs of its own (listen): the direct URL where the pool goes through a
 * transaction-mode pooler (connect.ts), since a pooler's sessions are lent to one transaction at a time. `wakesOtherWorkers`: whether writing events sends
 * a NOTIFY to the delivery workers of other processes (connect.ts, ConnectOptions).
 */
export function postgresDialect(url: string, wakesOtherWorkers = true): Dialect {
  const listen: Dialect['listen'] = (channel, onNotify) => listenForNotifications(url, channel, onNotify);
  if (wakesOtherWorkers) return { ...postgresOperations, listen };
  return { ...postgresOperations, listen, notifyEvents: null, insertsTogether: (...args) => insertsTogether(...args, false) };
}

/** The channel of notifyEvents: workers listen on it for new events. */
const EVENTS_WRITTEN: NotificationChannel = 'plainbase_events';
/** Dialect.preferIndexOrder, alone or after the BEGIN it can share a round trip with. */
const PREFER_INDEX_ORDER = 'set local enable_sort = off';

const postgresOperations: Omit<Dialect, 'listen'> = {
  engine: 'postgres',
  isUniqueViolation: (error) => driverErrorCode(error) === '23505',
  isUnavailable: (error) => {
    const cause = driverError(error);
    const code = driverErrorCode(cause);
    if (code !== undefined && pgUnavailableCodes.test(code)) return true;
    return cause instanceof Error && /Connection terminated|connection timeout|Cannot use a pool after calling end/i.test(cause.message);
  },
  isUnreadableJson: () => false,
  unreadableJson: null,
  // 57014 query_canceled: statement_timeout's (and a cancel's, which only an operator sends).
  isStatementTimeout: (error) => driverErrorCode(error) === '57014',
  // 22023 invalid_parameter_value, which `at time zone` raises as "time zone … not recognized".
  isUnknownTimeZone: (error) => {
    const cause = driverError(error);
    return driverErrorCode(cause) === '22023' && cause instanceof Error && /time zone/i.test(cause.message);
  },
  statementTimeout: (ms) => sql`select set_config('statement_timeout', ${String(Math.max(1, Math.round(ms)))}, true)`,
  // A whole number of our own written into the text: no parameter, so pg sends one simple query.
  beginWithStatementTimeout: (ms) => `begin; set local statement_timeout = ${Math.max(1, Math.round(ms))}`,
  statementBudgetCheck: null,
  currentSchema: async (db) => {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
    return rows[0]?.schema;
  },
  ping: sql`select 1`,
  // jsonb comes as its text (connect.ts): `{"a": 1}`, with a space after each colon and comma.
  readJson: (value) => JSON.parse(value as string),
  jsonText: (value) => value as string,
  jsonArrayTexts: (parameter) => `select jsonb_array_elements_text(cast(${parameter} as jsonb))`,
  notifyEvents: sql`select pg_notify(${sql.lit(EVENTS_WRITTEN)}, '')`,
  insertsTogether: (...args) => insertsTogether(...args, true),
  notifyEventsSequenced: sql`select pg_notify('plainbase_events_sequenced', '')`,
  notifyRecordsErased: sql`select pg_notify('plainbase_records_erased', '')`,
  // An arbitrary key of Plainbase's own ("pb" and "seq" in ASCII).
  sequencingLock: sql`select pg_advisory_xact_lock(28770, 7562609)`,
  // "pb" and "hk" in ASCII; try, not wait: a process that finds it taken leaves the round to the other.
  housekeepingLock: sql<{ claimed: unknown }>`select pg_try_advisory_xact_lock(28770, 26731) as claimed`,
  refreshStatistics: (table) => sql`analyze ${sql.table(table)}`,
  indexedBy: () => sql``,
  // Transaction-scoped (SET LOCAL): nothing is left on the connection, behind a pooler too.
  preferIndexOrder: sql.raw(PREFER_INDEX_ORDER),
  beginPreferringIndexOrder: `begin; ${PREFER_INDEX_ORDER}`,
  supportsSkipLocked: true,
  supportsRowLocks: true,
  groupsCommits: false,
  readsSynchronously: false,
  statementsRoundTrip: true,
  streamsInBatches: true,
  prepareRows: prepareCopy,
  parameter: (position) => `$${position}`,
  numberedParameters: true,
  jsonSortKey: (path) => {
    const json = pgJsonAt(path);
    const type = sql`jsonb_typeof(${json})`;
    const text = pgTextAt(path);
    return {
      rank: sql<number | null>`(case ${type} when 'number' then ${rankLiteral('number')} when 'string' then ${rankLiteral('string')} when 'boolean' then ${rankLiteral('boolean')} when 'array' then ${rankLiteral('array')} when 'object' then ${rankLiteral('object')} end)`,
      // COLLATE "C": code point order whatever the database's collation, as SQLite's BINARY.
      text: sql<string | null>`((case ${type} when 'number' then '' when 'string' then ${text} when 'boolean' then ${text} end) collate "C")`,
      number: sql<number | null>`(case ${type} when 'number' then (${json})::numeric when 'string' then 0 when 'boolean' then 0 end)`,
    };
  },
  jsonArrayHasElement: (path, element) => {
    const json = pgJsonAt(path);
    // Containment of a one-element array compares elements by type and value (1 = 1.0, 1 ≠ "1").
    return sql<SqlBool>`(jsonb_typeof(${json}) = 'array' and ${json} @> cast(${JSON.stringify([element])} as jsonb))`;
  },
  textContains: (haystack, needle) => sql<SqlBool>`(strpos(${haystack}, ${needle}) > 0)`,
  // lower() follows the collation's locale (and would fold É, where SQLite does not), except under
  // COLLATE "C", where it folds A–Z only; translate() would too, at ten times the cost (measured).
  foldAsciiCase: (text) => sql<string | null>`lower((${text}) collate "C")`,
  timeBucket: (column, unit, zone) => pgTimeBucket(column, unit, zone),
  doubleOf: (number) => sql<number | null>`cast(${number} as double precision)`,
  search: (terms) => {
    // A tsquery of quoted lexemes: 'a' <-> 'b' a phrase, 'b':* a prefix, & between terms.
    const text = checkedSearchWords(terms)
      .map((term) => `(${term.words.map((word, i) => `'${word}'${term.prefix && i === term.words.length - 1 ? ':*' : ''}`).join(' <-> ')})`)
      .join(' & ');
    const query = sql`to_tsquery('simple', ${text})`;
    return {
      matches: sql<SqlBool>`records.id in (select record_id from record_search where tsv @@ ${query})`,
      joinOn: sql<SqlBool>`record_search.record_id = records.id`,
      joinedMatch: sql<SqlBool>`record_search.tsv @@ ${query}`,
      // Normalisation 1: divided by 1 + the log of the text's length.
      score: sql<number>`ts_rank(record_search.tsv, ${query}, 1)`,
      scoreValue: (value) => sql<number>`cast(${value} as real)`,
    };
  },
  searchReindex: ({ collectionId, after, last }) => [
    // The batch's records locked and read as they are now, so a change committed meanwhile is not
    // overwritten with older text; the trigger (plainbase_record_search) writes what comes after.
    sql`with batch as (select id, data from records where collection_id = ${collectionId} and id > ${after} and id <= ${last} for update),
         fields as (select settings::jsonb -> 'searchFields' as paths from collections where id = ${collectionId}),
         gone as (delete from record_search where record_id in (select id from batch) and (select jsonb_typeof(paths) from fields) is distinct from 'array')
       insert into record_search (record_id, tsv)
       select batch.id, to_tsvector('simple', plainbase_search_text(batch.data, fields.paths)) from batch, fields where jsonb_typeof(fields.paths) = 'array'
       on conflict (record_id) do update set tsv = excluded.tsv`,
  ],
  // One trigger (records_search) for inserts, changes and deletes: turned off, it leaves behind
  // the rows of records deleted meanwhile, which no record id ever matches again (ids are never reused).
  searchTriggersRunning: sql<{ running: number }>`select count(*)::int as running from pg_trigger where tgrelid = 'records'::regclass and tgname = 'records_search' and tgenabled <> 'D'`,
  switchSearchTriggers: (on) => [sql`alter table records ${sql.raw(on ? 'enable' : 'disable')} trigger records_search`],
  // The lock the switch itself takes (SHARE ROW EXCLUSIVE), taken before the decision: it waits for
  // the record writes in flight, and holds new ones back until the transaction ends.
  searchTriggersLock: sql`lock table records in share row exclusive mode`,
  nullsFirstIndexColumn: (expression) => sql`${expression} nulls first`,
  recordIndexesLeadWithCollection: false,
  preparesRecordQueries: true,
};

/** `"data"->'a'->'b'`: the jsonb value at the path. */
const pgJsonAt = (path: readonly string[]) =>
  sql`${sql.ref('data')}${sql.join(checkedPath(path).map((segment) => sql`->${sql.lit(segment)}`), sql``)}`;

/** `"data"->'a'->>'b'`: the same value as text (a string unquoted). */
function pgTextAt(path: readonly string[]): RawBuilder<string> {
  const segments = checkedPath(path);
  const parents = segments.slice(0, -1).map((segment) => sql`->${sql.lit(segment)}`);
  return sql<string>`${sql.ref('data')}${sql.join(parents, sql``)}->>${sql.lit(segments[segments.length - 1]!)}`;
}

/**
 * The labels of time-buckets.ts from PostgreSQL's own time zone database: the instant's local
 * time in the zone (`at time zone`), truncated; for hours, with the offset, which is the local
 * time less the UTC time. COLLATE "C", as the record queries' other texts.
 */
function pgTimeBucket(column: 'created_at' | 'updated_at', unit: TimeBucketUnit, zone: string): RawBuilder<string> {
  const instant = sql`cast(${sql.ref(column)} as timestamptz)`;
  const local = sql`(${instant} at time zone ${zone})`;
  switch (unit) {
    case 'month':
      return sql<string>`(to_char(${local}, 'YYYY-MM') collate "C")`;
    case 'day':
      return sql<string>`(to_char(${local}, 'YYYY-MM-DD') collate "C")`;
    case 'week':
      return sql<string>`(to_char(date_trunc('week', ${local}), 'YYYY-MM-DD') collate "C")`;
    case 'hour': {
      const utc = sql`(${instant} at time zone 'UTC')`;
      return sql<string>`((to_char(${local}, 'YYYY-MM-DD"T"HH24":00"') || case when ${local} >= ${utc} then '+' || to_char(${local} - ${utc}, 'HH24:MI') else '-' || to_char(${utc} - ${local}, 'HH24:MI') end) collate "C")`;
    }
  }
}

/** A client of its own for LISTEN (a pooled connection would be handed to others). */
function insertsTogether(guard: string, guardParameters: number, tables: readonly TableColumns[], parameter: (position: number) => string, notify: boolean): string {
  let position = guardParameters;
  // INSERT … SELECT takes each parameter's type from its column, as INSERT … VALUES does.
  const inserts = tables.map(({ table, columns }, i) =>
    `insert_${i} as (insert into "${table}" (${columns.map((column) => `"${column}"`).join(', ')}) select ${columns.map(() => parameter(++position)).join(', ')} from guard)`);
  return `with guard as (${guard}), ${inserts.join(', ')} select ${notify ? `pg_notify('${EVENTS_WRITTEN}', '')` : '1'} from guard`;
}

function listenForNotifications(url: string, channel: NotificationChannel, onNotify: () => void): () => void {
  // Imported here, not at the top, so that a SQLite process never loads the PostgreSQL driver.
  const listening = import('pg').then(({ default: pg }) => {
    const client = new pg.Client({ connectionString: url });
    client.on('notification', onNotify);
    client.on('error', () => undefined);
    client.connect().then(() => client.query(`listen ${channel}`)).catch(() => undefined);
    return client;
  });
  return () => void listening.then((client) => client.end()).catch(() => undefined);
}
