import { createHash } from 'node:crypto';
import { sql, type AliasedRawBuilder, type CompiledQuery, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { JSON_TYPE_RANK } from '../../../db/dialect.js';
import { isKnownTimeZone, TIME_BUCKET_UNITS, type TimeBucketUnit } from '../../../db/time-buckets.js';
import { AppError } from '../../../errors.js';
import { encodeJsonCursor, readJsonCursor } from './json-cursor.js';
import { fieldTerms } from './compile.js';
import { parseFieldRef, type FieldRef } from './field-ref.js';
import { parseFilter, type FilterNode } from './filter-parser.js';
import { scopedQuery, type RecordQueryScope } from './list.js';

/**
 * Aggregates of a collection's records: `GET …/aggregate?groupBy=data.plan,createdAt:day
 * &metrics=count,sum:data.amount`. One statement groups the records the filter matches and
 * computes every metric; the groups are then sorted and paged in the same statement.
 *
 * - A data field groups by its value's sort key (rank, text, number: dialect.ts, jsonSortKeyOf),
 *   so groups are type-strict like filters (1 and "1" are two groups, 1 and 1.0 one), and missing
 *   and null are one group, `null`. Records whose field is an array or an object have no value to
 *   group by: they are left out and counted in `skipped` under the field's name.
 * - `createdAt:day` and the like group by the local time bucket in `tz` (db/time-buckets.ts).
 * - sum, avg, min and max take numbers only; a value of another type (string, boolean, array,
 *   object) is left out and counted in `skipped` under the field's name; missing and null are no
 *   value, not skipped. They are null for a group without numbers. Numbers are doubles on both
 *   engines (Dialect.doubleOf), so both answer the same.
 * - countDistinct counts distinct numbers, strings and booleans (1 and 1.0 one value, 1 and "1"
 *   two); null, arrays and objects are not counted.
 * - Pages are by position (the cursor holds the offset of the next group and a digest of the
 *   request it was made for): each page groups the records anew, so records written between two
 *   pages may move a group from one page to another.
 */

export const AGGREGATE_LIMITS = { groupBy: 3, metrics: 20, sortKeys: 4, limit: 1000, offset: 1_000_000 } as const;

export const METRIC_KINDS = ['sum', 'avg', 'min', 'max', 'countDistinct'] as const;
export type MetricKind = (typeof METRIC_KINDS)[number];
const NUMERIC_KINDS: ReadonlySet<MetricKind> = new Set(['sum', 'avg', 'min', 'max']);

type DataField = Extract<FieldRef, { kind: 'data' }>;

export type GroupKey =
  | { name: string; kind: 'data'; field: DataField }
  | { name: string; kind: 'bucket'; column: 'created_at' | 'updated_at'; unit: TimeBucketUnit };

export interface Metric {
  name: string;
  kind: MetricKind;
  field: DataField;
}

export interface AggregateSortKey {
  name: string;
  desc: boolean;
}

export interface AggregateRequest {
  filter?: FilterNode;
  groupBy: GroupKey[];
  metrics: Metric[];
  sort: AggregateSortKey[];
  tz: string;
  limit: number;
  offset: number;
  /** A digest of what the request asks, so a cursor made for another is refused. */
  signature: string;
}

export interface AggregateQueryText {
  filter?: string;
  groupBy?: string;
  metrics?: string;
  tz?: string;
  sort?: string;
  limit: number;
  cursor?: string;
}

const invalid = (parameter: string, message: string, details: Record<string, unknown> = {}) =>
  new AppError('INVALID_REQUEST', message, { field: `querystring.${parameter}`, ...details });

const BUCKETED_COLUMNS = new Map<string, 'created_at' | 'updated_at'>([['createdAt', 'created_at'], ['updatedAt', 'updated_at']]);

/** The items of a comma list, trimmed; an empty list for an absent or blank text. */
function listItems(parameter: string, text: string | undefined): string[] {
  if (text === undefined || text.trim() === '') return [];
  const items = text.split(',').map((item) => item.trim());
  if (items.some((item) => item === '')) throw invalid(parameter, `${parameter} is a comma list without empty items.`);
  return items;
}

function dataField(parameter: string, text: string): DataField {
  const parsed = parseFieldRef(text);
  if (!parsed.ok) throw invalid(parameter, `${parameter}: ${parsed.reason}.`, { found: text });
  if (parsed.field.kind !== 'data') throw invalid(parameter, `${parameter}: ${text} is not a data field (data.<path>).`, { found: text });
  return parsed.field;
}

function parseGroupBy(text: string | undefined): GroupKey[] {
  const items = listItems('groupBy', text);
  if (items.length > AGGREGATE_LIMITS.groupBy) throw invalid('groupBy', `groupBy takes at most ${AGGREGATE_LIMITS.groupBy} fields.`, { limit: AGGREGATE_LIMITS.groupBy });
  const keys: GroupKey[] = [];
  for (const item of items) {
    const [name, unit, ...rest] = item.split(':');
    const column = BUCKETED_COLUMNS.get(name!);
    let key: GroupKey;
    if (column) {
      if (rest.length > 0 || !(TIME_BUCKET_UNITS as readonly (string | undefined)[]).includes(unit)) {
        throw invalid('groupBy', `groupBy: ${name} groups by a bucket of time, like ${name}:day; the buckets are ${TIME_BUCKET_UNITS.join(', ')}.`, { found: item });
      }
      key = { name: item, kind: 'bucket', column, unit: unit as TimeBucketUnit };
    } else {
      if (unit !== undefined) throw invalid('groupBy', `groupBy: only createdAt and updatedAt take a bucket (${item}).`, { found: item });
      key = { name: item, kind: 'data', field: dataField('groupBy', item) };
    }
    if (keys.some((kept) => kept.name === key.name)) throw invalid('groupBy', `groupBy names ${item} twice.`, { found: item });
    keys.push(key);
  }
  return keys;
}

function parseMetrics(text: string | undefined): Metric[] {
  const metrics: Metric[] = [];
  for (const item of listItems('metrics', text)) {
    if (item === 'count') continue; // always answered
    const at = item.indexOf(':');
    const kind = item.slice(0, Math.max(0, at));
    if (at < 0 || !(METRIC_KINDS as readonly string[]).includes(kind)) {
      throw invalid('metrics', `metrics takes count and ${METRIC_KINDS.map((name) => `${name}:<data field>`).join(', ')}; ${JSON.stringify(item)} is none of them.`, { found: item });
    }
    const metric: Metric = { name: item, kind: kind as MetricKind, field: dataField('metrics', item.slice(at + 1)) };
    if (metrics.some((kept) => kept.name === metric.name)) throw invalid('metrics', `metrics names ${item} twice.`, { found: item });
    if (metrics.length === AGGREGATE_LIMITS.metrics) throw invalid('metrics', `metrics takes at most ${AGGREGATE_LIMITS.metrics} metrics besides count.`, { limit: AGGREGATE_LIMITS.metrics });
    metrics.push(metric);
  }
  return metrics;
}

function parseAggregateSort(text: string | undefined, groupBy: GroupKey[], metrics: Metric[]): AggregateSortKey[] {
  const known = new Set(['count', ...groupBy.map((key) => key.name), ...metrics.map((metric) => metric.name)]);
  const keys: AggregateSortKey[] = [];
  for (const item of listItems('sort', text)) {
    const desc = item.startsWith('-');
    const name = desc ? item.slice(1) : item;
    if (!known.has(name)) throw invalid('sort', `sort takes count, a groupBy field or one of the metrics, with - for descending; ${JSON.stringify(name)} is none of them.`, { found: name });
    if (keys.some((key) => key.name === name)) throw invalid('sort', `sort names ${name} twice.`, { found: name });
    if (keys.length === AGGREGATE_LIMITS.sortKeys) throw invalid('sort', `sort takes at most ${AGGREGATE_LIMITS.sortKeys} keys.`, { limit: AGGREGATE_LIMITS.sortKeys });
    keys.push({ name, desc });
  }
  return keys;
}

/** Reads and checks the query string of an aggregate (each mistake is a 400 naming its parameter). */
export function parseAggregateQuery(query: AggregateQueryText): AggregateRequest {
  const groupBy = parseGroupBy(query.groupBy);
  const metrics = parseMetrics(query.metrics);
  const sort = parseAggregateSort(query.sort, groupBy, metrics);
  const tz = query.tz ?? 'UTC';
  if (!isKnownTimeZone(tz)) throw invalid('tz', `tz takes an IANA time zone name, like Europe/Berlin or UTC; ${JSON.stringify(tz)} is not one.`, { found: tz });
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > AGGREGATE_LIMITS.limit) {
    throw invalid('limit', `limit must be a whole number from 1 to ${AGGREGATE_LIMITS.limit}.`, { limit: AGGREGATE_LIMITS.limit });
  }
  const filter = query.filter ? parseFilter(query.filter) : undefined;
  const signature = createHash('sha256')
    .update(JSON.stringify([query.filter ?? '', groupBy.map((key) => key.name), metrics.map((metric) => metric.name), sort, tz]))
    .digest('base64url')
    .slice(0, 22);
  const offset = query.cursor === undefined ? 0 : decodeAggregateCursor(query.cursor, signature);
  return { filter, groupBy, metrics, sort, tz, limit: query.limit, offset, signature };
}

// ---------------------------------------------------------------------------------------------
// Cursors (json-cursor.ts): {a: the request's signature, o: the offset of the next group}.

export function encodeAggregateCursor(signature: string, offset: number): string {
  return encodeJsonCursor({ a: signature, o: offset });
}

function decodeAggregateCursor(text: string, signature: string): number {
  const refuse = (reason: string) => invalid('cursor', `The cursor is not valid (${reason}); pass nextCursor exactly as received, with the same filter, groupBy, metrics, sort and tz.`);
  const parsed = readJsonCursor(text);
  if (!parsed || !Object.hasOwn(parsed, 'a') || !Object.hasOwn(parsed, 'o')) throw refuse('it is not one of ours');
  const { a, o } = parsed as { a: unknown; o: unknown };
  if (a !== signature) throw refuse('it was made for another aggregate');
  if (!Number.isSafeInteger(o) || (o as number) < 1 || (o as number) > AGGREGATE_LIMITS.offset) throw refuse('it is not one of ours');
  return o as number;
}

// ---------------------------------------------------------------------------------------------
// The statement

/** Where each part of the answer is in the statement's rows. */
interface Layout {
  groups: ({ key: GroupKey; alias: string })[];
  /** The fields of sum, avg, min and max, each once: its columns are s, a, lo, hi, k + index. */
  numericFields: DataField[];
  distinctFields: DataField[];
  /** Data fields of groupBy, each once, whose skipped records are counted (column tg + index). */
  skippedGroupFields: { field: DataField; alias: string }[];
}

function layoutOf(request: AggregateRequest): Layout {
  const numericFields: DataField[] = [];
  const distinctFields: DataField[] = [];
  for (const metric of request.metrics) {
    const into = NUMERIC_KINDS.has(metric.kind) ? numericFields : distinctFields;
    if (!into.some((field) => field.name === metric.field.name)) into.push(metric.field);
  }
  const groups = request.groupBy.map((key, i) => ({ key, alias: `g${i}` }));
  const skippedGroupFields = groups.flatMap(({ key, alias }) => (key.kind === 'data' ? [{ field: key.field, alias }] : []));
  return { groups, numericFields, distinctFields, skippedGroupFields };
}

const ARRAY_RANK = JSON_TYPE_RANK.array;

/**
 * The aggregate's one statement:
 *
 *   select * from (
 *     select g.*, <skipped totals over every group> from (<grouped records> ) as g
 *   ) as w where <not a group of arrays or objects> order by <sort, then the group keys> limit … offset …
 *
 * The totals of `skipped` are window sums over every group, so each page tells the whole
 * aggregate's. `scope` must say `budgeted`: the grouped read carries the engine's budget check.
 */
export function buildAggregateStatement(scope: RecordQueryScope, request: AggregateRequest): CompiledQuery {
  const { dialect } = scope;
  const layout = layoutOf(request);
  const columns: AliasedRawBuilder<unknown, string>[] = [];
  for (const { key, alias } of layout.groups) {
    if (key.kind === 'bucket') {
      columns.push(dialect.timeBucket(key.column, key.unit, request.tz).as(alias));
    } else {
      const [rank, text, number] = fieldTerms(key.field, dialect);
      columns.push(sql`${rank!.expression}`.as(`${alias}_r`), sql`${text!.expression}`.as(`${alias}_t`), dialect.doubleOf(number!.expression as Expression<number | null>).as(`${alias}_n`));
    }
  }
  columns.push(sql`count(*)`.as('c'));
  layout.numericFields.forEach((field, j) => {
    const [rank, , number] = fieldTerms(field, dialect);
    const value = dialect.doubleOf(sql<number | null>`case when ${rank!.expression} = ${sql.lit(JSON_TYPE_RANK.number)} then ${number!.expression} end`);
    columns.push(
      sql`sum(${value})`.as(`s${j}`),
      sql`avg(${value})`.as(`a${j}`),
      sql`min(${value})`.as(`lo${j}`),
      sql`max(${value})`.as(`hi${j}`),
      sql`sum(case when ${rank!.expression} <> ${sql.lit(JSON_TYPE_RANK.number)} then 1 else 0 end)`.as(`k${j}`),
    );
  });
  layout.distinctFields.forEach((field, j) => {
    const [rank, text, number] = fieldTerms(field, dialect);
    const numbers = dialect.doubleOf(sql<number | null>`case when ${rank!.expression} = ${sql.lit(JSON_TYPE_RANK.number)} then ${number!.expression} end`);
    const others = sql`case when ${rank!.expression} = ${sql.lit(JSON_TYPE_RANK.string)} then 's' || ${text!.expression} when ${rank!.expression} = ${sql.lit(JSON_TYPE_RANK.boolean)} then 'b' || ${text!.expression} end`;
    columns.push(sql`count(distinct ${numbers}) + count(distinct ${others})`.as(`d${j}`));
  });

  let grouped = scopedQuery({ ...scope, filter: request.filter }).select(columns);
  // By position: a bucket binds the zone as a parameter, and PostgreSQL takes a GROUP BY
  // expression as the select list's only when its text, parameter numbers included, is the same.
  const groupColumns = layout.groups.reduce((count, { key }) => count + (key.kind === 'data' ? 3 : 1), 0);
  if (groupColumns > 0) grouped = grouped.groupBy(Array.from({ length: groupColumns }, (_, i) => sql.lit(i + 1)));

  const isArrayGroup = (alias: string) => sql<SqlBool>`coalesce(${sql.ref(`g.${alias}_r`)}, 0) = ${sql.lit(ARRAY_RANK)}`;
  const kept = layout.skippedGroupFields.length === 0
    ? sql<SqlBool>`1 = 1`
    : sql<SqlBool>`not (${sql.join(layout.skippedGroupFields.map(({ alias }) => isArrayGroup(alias)), sql` or `)})`;
  const totals: RawBuilder<unknown>[] = [
    sql`${kept} as ${sql.id('kept')}`,
    ...layout.numericFields.map((_, j) => sql`sum(case when ${kept} then ${sql.ref(`g.k${j}`)} else 0 end) over () as ${sql.id(`tk${j}`)}`),
    ...layout.skippedGroupFields.map(({ alias }) => sql`sum(case when ${isArrayGroup(alias)} then ${sql.ref('g.c')} else 0 end) over () as ${sql.id(`t${alias}`)}`),
  ];

  const order: RawBuilder<unknown>[] = [];
  const ordered = new Set<string>();
  const orderBy = (name: string, desc: boolean) => {
    if (ordered.has(name)) return;
    ordered.add(name);
    const group = layout.groups.find(({ key }) => key.name === name);
    const direction = sql.raw(desc ? 'desc nulls last' : 'asc nulls first');
    if (group?.key.kind === 'data') {
      for (const part of ['r', 't', 'n']) order.push(sql`${sql.ref(`w.${group.alias}_${part}`)} ${direction}`);
    } else if (group) {
      order.push(sql`${sql.ref(`w.${group.alias}`)} ${direction}`);
    } else {
      order.push(sql`${sql.ref(`w.${metricColumn(layout, request.metrics, name)}`)} ${direction}`);
    }
  };
  for (const key of request.sort) orderBy(key.name, key.desc);
  for (const { key } of layout.groups) orderBy(key.name, false);
  const orderClause = order.length > 0 ? sql`order by ${sql.join(order, sql`, `)}` : sql``;

  const statement = sql`select * from (select g.*, ${sql.join(totals, sql`, `)} from (${grouped}) as g) as w where w.kept ${orderClause} limit ${sql.lit(request.limit + 1)} offset ${sql.lit(request.offset)}`;
  return statement.compile(scope.executor);
}

/** The column of a metric in the statement's rows. */
function metricColumn(layout: Layout, metrics: Metric[], name: string): string {
  if (name === 'count') return 'c';
  const metric = metrics.find((candidate) => candidate.name === name)!;
  if (metric.kind === 'countDistinct') return `d${layout.distinctFields.findIndex((field) => field.name === metric.field.name)}`;
  const j = layout.numericFields.findIndex((field) => field.name === metric.field.name);
  return `${{ sum: 's', avg: 'a', min: 'lo', max: 'hi' }[metric.kind]}${j}`;
}

// ---------------------------------------------------------------------------------------------
// The answer

export interface AggregateGroup {
  group: Record<string, unknown>;
  count: number;
  sum?: Record<string, number | null>;
  avg?: Record<string, number | null>;
  min?: Record<string, number | null>;
  max?: Record<string, number | null>;
  countDistinct?: Record<string, number>;
}

export interface AggregatePage {
  data: AggregateGroup[];
  nextCursor: string | null;
  skipped: Record<string, number>;
}

type Row = Record<string, unknown>;

const numberOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/** A group key's value from its sort key: the scalar it was, or null. */
function groupValue(rank: unknown, text: unknown, number: unknown): unknown {
  switch (numberOrNull(rank)) {
    case JSON_TYPE_RANK.number: return Number(number);
    case JSON_TYPE_RANK.string: return text;
    case JSON_TYPE_RANK.boolean: return text === 'true';
    default: return null;
  }
}

/**
 * A lower bound on a row's bytes in the answer (its texts' UTF-16 length): once the rows read
 * pass the page budget by this measure, the page certainly ends before them, so reading stops.
 */
export const rowTextLength = (row: Row): number =>
  Object.values(row).reduce<number>((total, value) => total + (typeof value === 'string' ? value.length : 8), 0);

/**
 * The page from the statement's rows (up to limit + 1: one more says a next page exists), at
 * most `pageBytes` of JSON (PLAINBASE_PAGE_BYTES) but at least one group: a long group value
 * ends the page early, with a cursor to the rest, as a list's page does.
 */
export function aggregatePageOf(request: AggregateRequest, rows: Row[], pageBytes: number): AggregatePage {
  const layout = layoutOf(request);
  const skipped: Record<string, number> = {};
  const first = rows[0];
  const addSkipped = (name: string, value: unknown) => {
    skipped[name] = (skipped[name] ?? 0) + (first ? Number(value ?? 0) : 0);
  };
  layout.numericFields.forEach((field, j) => addSkipped(field.name, first?.[`tk${j}`]));
  layout.skippedGroupFields.forEach(({ field, alias }) => addSkipped(field.name, first?.[`t${alias}`]));
  // The frame with room for the longest cursor, then each group and its comma.
  let bytes = Buffer.byteLength(JSON.stringify({ data: [], nextCursor: encodeAggregateCursor(request.signature, AGGREGATE_LIMITS.offset), skipped }));
  const data: AggregateGroup[] = [];
  for (const row of rows.slice(0, request.limit)) {
    const group = groupOf(layout, request, row);
    bytes += Buffer.byteLength(JSON.stringify(group)) + 1;
    if (data.length > 0 && bytes > pageBytes) break;
    data.push(group);
  }
  const more = rows.length > data.length;
  return { data, nextCursor: more ? encodeAggregateCursor(request.signature, request.offset + data.length) : null, skipped };
}

function groupOf(layout: Layout, request: AggregateRequest, row: Row): AggregateGroup {
  const group: Record<string, unknown> = {};
  for (const { key, alias } of layout.groups) {
    group[key.name] = key.kind === 'bucket' ? row[alias] : groupValue(row[`${alias}_r`], row[`${alias}_t`], row[`${alias}_n`]);
  }
  const answer: AggregateGroup = { group, count: Number(row.c) };
  for (const metric of request.metrics) {
    const value = row[metricColumn(layout, request.metrics, metric.name)];
    if (metric.kind === 'countDistinct') (answer.countDistinct ??= {})[metric.field.name] = Number(value);
    else (answer[metric.kind] ??= {})[metric.field.name] = numberOrNull(value);
  }
  return answer;
}
