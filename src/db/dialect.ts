import { sql, type DialectAdapter, type Expression, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { DatabaseError } from './db-errors.js';
import type { Database, Executor } from './schema.js';
import type { TimeBucketUnit } from './time-buckets.js';

/**
 * What differs between SQLite and PostgreSQL lives behind this interface and nowhere else
 * (docs/design.md §1): capability flags for what one engine can do and the other cannot, and
 * the engine-specific SQL and operations. Each engine's implementation is a file of its own
 * (sqlite-dialect.ts, postgres-dialect.ts); connect.ts picks one when it opens the database and
 * hands it on (Storage.dialect, Deps.dialect, and dialectOf for data helpers that receive only an
 * executor). Nothing asks which engine it is talking to: it asks the Dialect.
 */
export type Engine = 'sqlite' | 'postgres';

/** The NOTIFY channels Plainbase uses between processes. */
export type NotificationChannel = 'plainbase_events' | 'plainbase_events_sequenced' | 'plainbase_records_erased';

export interface Dialect {
  /** The engine's name: for logs, cache keys and the DDL of past migrations; behaviour is chosen by the flags and operations below. */
  engine: Engine;

  // Driver errors. db-errors.ts maps them, once, where queries run; these recognise the driver's
  // error, or the app error it was mapped to (its cause).

  /** True when the error says a unique constraint was broken. */
  isUniqueViolation(error: unknown): boolean;
  /** True when the error means the database cannot be reached (so: 503, not 500). */
  isUnavailable(error: unknown): boolean;
  /**
   * True when a JSON function met stored data it cannot read: SQLite's stop at 1,000 levels of
   * nesting, which records stored before the 100-level limit (accepted-json.ts) may pass.
   * PostgreSQL reads any jsonb it stored.
   */
  isUnreadableJson(error: unknown): boolean;
  /** True when the error says a statement ran past its time budget (statementTimeout, statementBudgetCheck). */
  isStatementTimeout(error: unknown): boolean;
  /**
   * True when the database does not know a time zone a statement named (timeBucket): PostgreSQL's
   * own zone database may lack a name that the runtime's, which checked it first, knows.
   */
  isUnknownTimeZone(error: unknown): boolean;
  /** True for a record whose data isUnreadableJson would refuse; null where there are none. */
  unreadableJson: RawBuilder<SqlBool> | null;
  /**
   * The schema the connection works in, where the engine has schemas (PostgreSQL: tests give each
   * run its own); undefined where it has none (SQLite).
   */
  currentSchema(db: Kysely<any>): Promise<string | undefined>;
  /** A cheap round trip for readiness checks. */
  ping: RawBuilder<unknown>;
  /** A JSON column's value as read from the driver (text on both engines: db/connect.ts), parsed. */
  readJson(value: unknown): unknown;
  /**
   * A JSON column's value as read from the driver, as JSON text of the same value as readJson's:
   * the text as it is, so nothing is parsed. On SQLite that is writeJson's output as stored; on
   * PostgreSQL, jsonb's own text (a space after each colon and comma, numbers in plain decimal).
   */
  jsonText(value: unknown): string;
  /**
   * A subquery of the strings in `parameter`, a bound parameter (its marker) that holds a JSON
   * array of strings: for `x in (…)` with a list of any length as one value, so the statement
   * text stays the same whatever the length.
   */
  jsonArrayTexts(parameter: string): string;
  /**
   * Tells other processes that events were written, or null where nobody else can listen.
   * PostgreSQL delivers a NOTIFY only when the transaction commits, so listeners never wake early.
   */
  notifyEvents: RawBuilder<unknown> | null;
  /**
   * The text of one statement that inserts one row into each of `tables`, in order, only when the
   * `guard` select finds a row, and then does what notifyEvents does: one round trip, and a
   * transaction of its own. It answers one row when it wrote and none when the guard found
   * nothing. Parameters 1 to `guardParameters` are the guard's; each table's values follow, in the
   * order of its columns, marked with `parameter` (a direct query's, db/direct-query.ts). Null
   * where one statement cannot write several tables (SQLite has no data-modifying WITH; there,
   * writes that arrive together share a commit instead).
   */
  insertsTogether: ((guard: string, guardParameters: number, tables: readonly TableColumns[], parameter: (position: number) => string) => string) | null;
  /**
   * Tells other processes, when the transaction commits, that record data was erased from events
   * (a permanent delete), so that copies they keep in memory go; or null where nobody else can listen.
   */
  notifyRecordsErased: RawBuilder<unknown> | null;
  /** Tells other processes that events took their place in the sequence (the event feed's order), or null. */
  notifyEventsSequenced: RawBuilder<unknown> | null;
  /**
   * Held until the transaction ends, so that events are given their places in the sequence by one
   * transaction at a time, and so in the order they become visible; null where transactions
   * already run one at a time (SQLite's one connection).
   */
  sequencingLock: RawBuilder<unknown> | null;
  /**
   * Tries to take, until the transaction ends, the lock that lets one process at a time purge
   * what has expired (worker/housekeeping.ts): answers one row whose `claimed` is true when it
   * did. Transaction-scoped, so nothing is left on the connection, behind a pooler too. Null
   * where one process owns the database (SQLite).
   */
  housekeepingLock: RawBuilder<{ claimed: unknown }> | null;
  /**
   * Refreshes the query planner's statistics of a table that just grew fast, or null where none
   * is needed. PostgreSQL plans from sampled statistics that autovacuum refreshes only after 10%
   * growth and within a minute or so; until then a table filled by an import looks empty, and the
   * event feed's ordered read becomes a scan and a sort of every event (37 ms a page instead of
   * 0.3 ms, measured). Runs outside any transaction; holds no lock that stops reads or writes.
   */
  refreshStatistics: ((table: 'events') => RawBuilder<unknown>) | null;
  /**
   * `indexed by <index>` where the planner must be told which index to read a table through
   * (SQLite takes events_pending for `fanned_out_at is null` over the partial index a query was
   * written for), or empty text where it needs no telling.
   */
  indexedBy(index: string): RawBuilder<unknown>;
  /**
   * For the rest of the transaction, read ordered rows from an index in its order rather than
   * sort what a cheaper-looking index gives, or null where the planner needs no such nudge.
   * PostgreSQL's statistics, taken when nothing was waiting, make "every waiting event, then sort"
   * look cheaper than the import's own ordered index (webhooks/fair-fan-out.ts). The worker's
   * round sets it once, with its BEGIN where the engine can (beginPreferringIndexOrder), rather
   * than around each read.
   */
  preferIndexOrder: RawBuilder<unknown> | null;
  /**
   * The text that begins a transaction with preferIndexOrder in force, in one round trip
   * (PostgreSQL: `begin; set local enable_sort = off`, one simple query since it binds no value);
   * null where preferIndexOrder is null (db/index-order-transaction.ts).
   */
  beginPreferringIndexOrder: string | null;
  /**
   * Calls `onNotify` whenever another process signals `channel` (notifyEvents and
   * notifyEventsSequenced). Where nobody else can write (SQLite: the database is one process's
   * own), it does nothing. A lost listener costs only latency: every user of this also polls,
   * more slowly. Returns a stop.
   */
  listen(channel: NotificationChannel, onNotify: () => void): () => void;

  // Capabilities.

  /** Whether claims can skip rows other workers have locked (SELECT … FOR UPDATE SKIP LOCKED). */
  supportsSkipLocked: boolean;
  /**
   * Whether a transaction must lock a row (SELECT … FOR UPDATE) to keep others from changing what
   * it read until it commits. SQLite needs no lock: its one connection runs one transaction at a time.
   */
  supportsRowLocks: boolean;
  /**
   * Whether writes that arrive together should share one transaction and one commit
   * (group-commit.ts): true where one connection runs the writes one after another anyway
   * (SQLite), so a shared commit only saves work; false where each write has a pooled connection
   * of its own and would wait for the others for nothing.
   */
  groupsCommits: boolean;
  /**
   * Whether a direct read (direct-query.ts) can be answered synchronously, without a promise:
   * true for SQLite's in-process driver. Hot paths use it to skip the promise and the microtask.
   */
  readsSynchronously: boolean;
  /**
   * Whether Kysely's `stream` reads a batch of rows per round trip (PostgreSQL's cursor), so a
   * long read need not hold every row at once; SQLite reads row by row through row-stream.ts.
   */
  streamsInBatches: boolean;

  /**
   * Whether each statement is a round trip to another process (PostgreSQL), costing more than
   * most statements' own work, so that folding a lookup into the statement beside it pays even
   * when it adds work per row; false where a statement is a call into this process (SQLite).
   */
  statementsRoundTrip: boolean;

  /**
   * Rows of one table to write in bulk (an import's records and their events), made ready for the
   * engine now and written by `write`, in the caller's transaction. `values` holds the rows one
   * after another, each its values in the order of `columns`. SQLite writes them with multi-row
   * INSERTs; PostgreSQL with `COPY … FROM STDIN`, which parses no statement of thousands of
   * parameters (postgres-copy.ts). Preparing apart from writing lets a caller make its next batch
   * ready while the database still writes the last one.
   */
  prepareRows<T extends keyof Database>(table: T, columns: readonly (keyof Database[T] & string)[], values: readonly unknown[]): PreparedRows;

  /** The bound-parameter marker for the `position`-th parameter (from 1) of hand-written SQL. */
  parameter(position: number): string;
  /**
   * True when `parameter(n)` names the n-th value ($1), so the values bind as they are; false when
   * each marker takes the next value (?), so the values bind in the order the markers appear.
   */
  numberedParameters: boolean;

  // Record queries (src/modules/records/query) and record indexes (src/modules/indexes). Paths are
  // segments of JSON_PATH_SEGMENT, inlined as SQL literals: an expression index matches a query
  // only when the query spells the same expression, and DDL cannot take bound parameters.

  /**
   * The sort key (rank, text, number) of the field at `path` of `records.data`, see
   * jsonSortKeyOf. Filters, ORDER BY and index DDL all use these expressions.
   */
  jsonSortKey(path: readonly string[]): JsonSortKeySql;
  /** True when the field at `path` is an array with an element of the same type and value as `element`. */
  jsonArrayHasElement(path: readonly string[], element: JsonScalar): RawBuilder<SqlBool>;
  /** Case-sensitive substring test; `needle` is a bound parameter. An empty needle is in every text. */
  textContains(haystack: Expression<string | null>, needle: string): RawBuilder<SqlBool>;
  /**
   * The text with A–Z made a–z and every other character as it is (foldAsciiCase in SQL): the
   * same on both engines whatever the database's locale, which a Unicode lower() is not.
   */
  foldAsciiCase(text: Expression<string | null>): RawBuilder<string | null>;
  /**
   * The label of the local-time bucket of `unit` in the IANA zone `zone` (a bound parameter) that
   * holds the timestamp column (ISO 8601 text): time-buckets.ts says what the labels are. Ordered
   * by code point, like every text the record queries order by.
   */
  timeBucket(column: 'created_at' | 'updated_at', unit: TimeBucketUnit, zone: string): RawBuilder<string>;
  /** A number as a double (IEEE 754, as JSON numbers are read): sums and averages agree on both engines. */
  doubleOf(number: Expression<number | null>): RawBuilder<number | null>;
  /**
   * Full-text search over `record_search` (migration 0020, modules/search/): the SQL for a search
   * of `terms`, each words only (letters, digits, marks), so no engine syntax can come from them.
   */
  search(terms: readonly SearchTerm[]): SearchSql;
  /**
   * The statement that (re)writes the search rows of a collection's records with ids in
   * (`after`, `last`], in one batch of a search index build (modules/search/search-builds.ts): from
   * the searched paths of the collection's settings as they are, or removes them when it has none.
   * Each engine's text is that of its trigger on `records` (migration 0020).
   */
  searchReindex(range: { collectionId: string; after: string; last: string }): RawBuilder<unknown>[];
  /**
   * The triggers that write `record_search` as records are inserted and changed (migration 0020)
   * run only while some collection has searchFields (modules/collections/search-triggers.ts). This
   * answers one row: `running` is 1 when they run now, as the catalog says, 0 when not.
   */
  searchTriggersRunning: RawBuilder<{ running: number | string }>;
  /** The statements that turn those triggers on or off (in the caller's transaction). */
  switchSearchTriggers(on: boolean): RawBuilder<unknown>[];
  /**
   * Held until the transaction ends, so that one transaction at a time decides whether the search
   * triggers run, having seen every decision committed before it; null where transactions already
   * run one at a time (SQLite's one connection).
   */
  searchTriggersLock: RawBuilder<unknown> | null;
  /** An index column over a nullable sort-key expression, ordered NULLs first ascending like our ORDER BY. */
  nullsFirstIndexColumn(expression: Expression<unknown>): RawBuilder<unknown>;
  /**
   * Whether a record index (a partial index of one collection's rows) starts with collection_id,
   * although the column is constant within it. SQLite's planner prices an index by the equalities
   * on its leading columns, so it needs the column to see the index as selective. PostgreSQL's
   * must not have it: it drops `collection_id = ?` from the index conditions (the index's
   * predicate already says so), and an index whose first column has no condition is priced as a
   * walk of the whole index, so once a large collection is analysed a scan of the table wins.
   */
  recordIndexesLeadWithCollection: boolean;
  /**
   * Sets the time budget of every following statement of the transaction it runs in, in
   * milliseconds (PostgreSQL: statement_timeout, set local to the transaction so that it also
   * holds behind a transaction-mode pooler, and never outlives it); null where the engine has no
   * such setting (SQLite: statementBudgetCheck).
   */
  statementTimeout: ((ms: number) => RawBuilder<unknown>) | null;
  /**
   * The text that starts a transaction whose statements have that time budget, in one round trip
   * (PostgreSQL: `begin; set local statement_timeout`, sent as one simple query since it binds no
   * value), where statementTimeout is not null.
   */
  beginWithStatementTimeout: ((ms: number) => string) | null;
  /**
   * A condition that a statement with a time budget carries in its WHERE clause, so that it ends
   * itself once the budget is spent (db/statement-budget.ts); null where statementTimeout does it.
   */
  statementBudgetCheck: RawBuilder<SqlBool> | null;
  /**
   * Whether a record query whose text repeats is prepared once per connection and may then run
   * on one plan made for all calls (prepared-statements.ts: PostgreSQL). Such a plan can use a
   * record index, a partial index of one collection, only when the query names that collection
   * as a literal (records/query/collection-literal.ts): a parameter could be any collection.
   * SQLite's statements are kept by statement-cache.ts and take the collection as a parameter.
   */
  preparesRecordQueries: boolean;
}

/** Rows made ready by Dialect.prepareRows. */
export interface PreparedRows {
  /** Writes the rows through `executor` (its transaction's connection); nothing when there are none. */
  write(executor: Executor): Promise<void>;
}

export type JsonScalar = string | number | boolean | null;

/** A table and the columns a statement writes, in the order of its values. */
export interface TableColumns {
  table: string;
  columns: readonly string[];
}

/** A field's sort key as values: what jsonSortKeyOf computes in JS and Dialect.jsonSortKey in SQL. */
export interface JsonSortKey {
  rank: number | null;
  text: string | null;
  number: number | null;
}

export interface JsonSortKeySql {
  rank: RawBuilder<number | null>;
  text: RawBuilder<string | null>;
  number: RawBuilder<number | null>;
}

/** A path segment that may be inlined into SQL: an identifier, so no quote can ever appear. */
export const JSON_PATH_SEGMENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Order of JSON types in a sort: numbers, then strings, then booleans, then arrays and objects. */
export const JSON_TYPE_RANK = { number: 1, string: 2, boolean: 3, array: 4, object: 4 } as const;

/**
 * The sort key of a JSON value. Keys compare part by part, NULL lowest; both engines' SQL
 * (Dialect.jsonSortKey) computes exactly this, so a field orders and compares the same on both:
 *
 *   missing or null → (NULL, NULL, NULL)   null and missing are one thing: "no value"
 *   number n        → (1, '', n)
 *   string s        → (2, s, 0)            by code point: SQLite BINARY, PostgreSQL COLLATE "C"
 *   boolean b       → (3, 'false' | 'true', 0)
 *   array, object   → (4, NULL, NULL)      after every scalar; the record id orders them
 *
 * No part is NULL for a scalar, so a unique index over the key refuses two equal scalars, while
 * missing values, nulls, arrays and objects never collide (NULLs are distinct in unique indexes).
 * The text of numbers and the number of strings are constants so that equality on the whole key
 * is an index seek, and a range on a number is a seek on (rank, '') then a range.
 */
export function jsonSortKeyOf(value: unknown): JsonSortKey {
  if (value === null || value === undefined) return { rank: null, text: null, number: null };
  if (typeof value === 'number') return { rank: JSON_TYPE_RANK.number, text: '', number: value };
  if (typeof value === 'string') return { rank: JSON_TYPE_RANK.string, text: value, number: 0 };
  if (typeof value === 'boolean') return { rank: JSON_TYPE_RANK.boolean, text: String(value), number: 0 };
  return { rank: JSON_TYPE_RANK.array, text: null, number: null };
}

/** A–Z made a–z, nothing else changed: what Dialect.foldAsciiCase does in SQL. */
export const foldAsciiCase = (text: string): string => text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());

export function checkedPath(path: readonly string[]): readonly string[] {
  // The callers validate; this guards the one place where text becomes SQL.
  if (path.length === 0 || !path.every((segment) => JSON_PATH_SEGMENT.test(segment))) {
    throw new Error(`unsafe JSON path ${JSON.stringify(path)}`);
  }
  return path;
}

export const rankLiteral = (type: keyof typeof JSON_TYPE_RANK) => sql.lit(JSON_TYPE_RANK[type]);

/** Both engines take JSON as text: SQLite stores it, PostgreSQL casts it to jsonb. */
export const writeJson = (value: unknown): string => JSON.stringify(value);

/** The Dialect of each connection connect.ts opened, by the Kysely adapter its instances share. */
const dialects = new WeakMap<DialectAdapter, Dialect>();

/** Called by kysely-dialect.ts when Kysely creates the adapter of a connection (once per connection). */
export function attachDialect(adapter: DialectAdapter, dialect: Dialect): void {
  dialects.set(adapter, dialect);
}

/**
 * The Dialect the executor's connection was opened with: the very object connect.ts returned as
 * Storage.dialect (and so Deps.dialect), for data helpers that receive only an executor (a
 * transaction, a snapshot, the Db). Transactions and plugin instances share their connection's
 * adapter, so they find it too. Services use their Deps.dialect.
 */
export function dialectOf(executor: Kysely<any>): Dialect {
  const dialect = dialects.get(executor.getExecutor().adapter);
  if (!dialect) throw new Error('this Kysely instance was not opened by connectStorage (db/connect.ts), so it has no Dialect');
  return dialect;
}

const errorCode = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;

/**
 * The driver's code of an error, or of the driver error behind a mapped one (db-errors.ts keeps
 * it as the cause), so that the recognisers answer alike before and after mapping.
 */
export const driverErrorCode = (error: unknown): string | undefined => errorCode(driverError(error));

/** The driver's own error: the error itself, or the cause of the app error it was mapped to. */
export function driverError(error: unknown): unknown {
  return error instanceof DatabaseError ? error.cause : error;
}

/** One term of a search: words that follow each other (one word, or a quoted phrase), the last one a prefix or not. */
export interface SearchTerm {
  words: string[];
  prefix: boolean;
}

/** A search in SQL (Dialect.search): every term must match. */
export interface SearchSql {
  /** Records (of the query's `records`) whose text matches: a filter, for lists in another order and counts. */
  matches: RawBuilder<SqlBool>;
  /** For ranked lists: how `record_search` joins `records`, and the condition on the joined row. */
  joinOn: RawBuilder<SqlBool>;
  joinedMatch: RawBuilder<SqlBool>;
  /**
   * The joined row's score, higher first. It depends on the record's own text only (how often
   * the terms occur in it, and its length), never on other records: another workspace's records
   * cannot move a record up or down.
   */
  score: RawBuilder<number>;
  /** A score from a cursor, as the engine compares it with `score` exactly. */
  scoreValue(value: number): RawBuilder<number>;
}

/** The terms' words, checked to be words only: what lets Dialect.search write them into the engine's query text. */
export function checkedSearchWords(terms: readonly SearchTerm[]): readonly SearchTerm[] {
  for (const term of terms) {
    if (term.words.length === 0 || !term.words.every((word) => /^[\p{L}\p{N}\p{M}]+$/u.test(word))) throw new Error('a search term holds something other than words');
  }
  return terms;
}
