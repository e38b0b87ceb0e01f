import { PostgresAdapter, sql, type Expression, type Kysely, type RawBuilder, type SqlBool } from 'kysely';

/**
 * What differs between SQLite and PostgreSQL lives here and nowhere else (docs/design.md §1).
 * The rest of the code asks this module, never `if (postgres)`.
 */
export type Engine = 'sqlite' | 'postgres';

export interface Dialect {
  engine: Engine;
  /** True when the driver error says a unique constraint was broken. */
  isUniqueViolation(error: unknown): boolean;
  /** True when the error means the database cannot be reached (so: 503, not 500). */
  isUnavailable(error: unknown): boolean;
  /**
   * True when a JSON function met stored data it cannot read: SQLite's stop at 1,000 levels of
   * nesting, which records stored before the 100-level limit (accepted-json.ts) may pass.
   * PostgreSQL reads any jsonb it stored.
   */
  isUnreadableJson(error: unknown): boolean;
  /** True for a record whose data isUnreadableJson would refuse; null where there are none. */
  unreadableJson: RawBuilder<SqlBool> | null;
  /** A cheap round trip for readiness checks. */
  ping: RawBuilder<unknown>;
  /** A JSON column's value as read from the driver (text on SQLite, parsed jsonb on PostgreSQL). */
  readJson(value: unknown): unknown;
  /**
   * A JSON column's value as read from the driver, as JSON text: what JSON.stringify(readJson(value))
   * gives. On SQLite that is the stored text as it is (every write stores writeJson's output), so
   * nothing is parsed; PostgreSQL gives jsonb parsed, written out again here.
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
  /** Tells other processes that events took their place in the sequence (the event feed's order), or null. */
  notifyEventsSequenced: RawBuilder<unknown> | null;
  /**
   * Held until the transaction ends, so that events are given their places in the sequence by one
   * transaction at a time, and so in the order they become visible; null where transactions
   * already run one at a time (SQLite's one connection).
   */
  sequencingLock: RawBuilder<unknown> | null;
  /** Whether claims can skip rows other workers have locked (SELECT … FOR UPDATE SKIP LOCKED). */
  supportsSkipLocked: boolean;
  /**
   * Whether a transaction must lock a row (SELECT … FOR UPDATE) to keep others from changing what
   * it read until it commits. SQLite needs no lock: its one connection runs one transaction at a time.
   */
  supportsRowLocks: boolean;
  /** The bound-parameter marker for the `position`-th parameter (from 1) of hand-written SQL. */
  parameter(position: number): string;

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
  /** An index column over a nullable sort-key expression, ordered NULLs first ascending like our ORDER BY. */
  nullsFirstIndexColumn(expression: Expression<unknown>): RawBuilder<unknown>;
}

export type JsonScalar = string | number | boolean | null;

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

function checkedPath(path: readonly string[]): readonly string[] {
  // The callers validate; this guards the one place where text becomes SQL.
  if (path.length === 0 || !path.every((segment) => JSON_PATH_SEGMENT.test(segment))) {
    throw new Error(`unsafe JSON path ${JSON.stringify(path)}`);
  }
  return path;
}

const rankLiteral = (type: keyof typeof JSON_TYPE_RANK) => sql.lit(JSON_TYPE_RANK[type]);

/** Both engines take JSON as text: SQLite stores it, PostgreSQL casts it to jsonb. */
export const writeJson = (value: unknown): string => JSON.stringify(value);

const errorCode = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;

const sqliteDialect: Dialect = {
  engine: 'sqlite',
  isUniqueViolation: (error) => {
    const code = errorCode(error);
    return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  },
  isUnavailable: (error) => {
    const code = errorCode(error);
    return code === 'SQLITE_BUSY' || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_IOERR' ||
      (error instanceof TypeError && /database connection is not open/.test(error.message));
  },
  isUnreadableJson: (error) => errorCode(error) === 'SQLITE_ERROR' && (error as Error).message === 'malformed JSON',
  unreadableJson: sql<SqlBool>`json_valid(${sql.ref('data')}) = 0`,
  ping: sql`select 1`,
  readJson: (value) => JSON.parse(value as string),
  jsonText: (value) => value as string,
  jsonArrayTexts: (parameter) => `select value from json_each(${parameter})`,
  notifyEvents: null,
  notifyEventsSequenced: null,
  sequencingLock: null,
  supportsSkipLocked: false,
  supportsRowLocks: false,
  parameter: () => '?',
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
  nullsFirstIndexColumn: (expression) => sql`${expression}`,
};

const sqlitePath = (path: readonly string[]) => sql.lit(`$.${checkedPath(path).join('.')}`);

function sqliteElementIs(element: JsonScalar): RawBuilder<SqlBool> {
  if (element === null) return sql<SqlBool>`element.type = 'null'`;
  if (typeof element === 'boolean') return sql<SqlBool>`element.type = ${sql.lit(String(element))}`;
  if (typeof element === 'number') return sql<SqlBool>`element.type in ('integer', 'real') and element.value = ${element}`;
  return sql<SqlBool>`element.type = 'text' and element.value = ${element}`;
}

// PostgreSQL error classes 08 (connection exception) and 57P (operator intervention), plus the
// socket errors node reports before any PostgreSQL code exists.
const pgUnavailableCodes = /^(08|57P)|^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EPIPE)$/;

const postgresDialect: Dialect = {
  engine: 'postgres',
  isUniqueViolation: (error) => errorCode(error) === '23505',
  isUnavailable: (error) => {
    const code = errorCode(error);
    if (code !== undefined && pgUnavailableCodes.test(code)) return true;
    return error instanceof Error && /Connection terminated|connection timeout|Cannot use a pool after calling end/i.test(error.message);
  },
  isUnreadableJson: () => false,
  unreadableJson: null,
  ping: sql`select 1`,
  readJson: (value) => value,
  jsonText: (value) => JSON.stringify(value),
  jsonArrayTexts: (parameter) => `select jsonb_array_elements_text(cast(${parameter} as jsonb))`,
  notifyEvents: sql`select pg_notify('plainbase_events', '')`,
  notifyEventsSequenced: sql`select pg_notify('plainbase_events_sequenced', '')`,
  // An arbitrary key of Plainbase's own ("pb" and "seq" in ASCII).
  sequencingLock: sql`select pg_advisory_xact_lock(28770, 7562609)`,
  supportsSkipLocked: true,
  supportsRowLocks: true,
  parameter: (position) => `$${position}`,
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
  nullsFirstIndexColumn: (expression) => sql`${expression} nulls first`,
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

export function dialectFor(engine: Engine): Dialect {
  return engine === 'sqlite' ? sqliteDialect : postgresDialect;
}

/** The engine behind a Kysely instance; for migrations, which receive only the instance. */
export function engineOf(db: Kysely<any>): Engine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}
