import { sql, type Expression, type OrderByModifiersCallbackExpression, type SqlBool } from 'kysely';
import { JSON_TYPE_RANK, jsonSortKeyOf, type Dialect, type JsonScalar, type JsonSortKey } from '../../../db/dialect.js';
import { fieldValueOf, type FieldRef } from './field-ref.js';
import { foldAsciiCase } from '../../../db/dialect.js';
import type { ComparisonOperator, FilterNode, FilterValue } from './filter-parser.js';
import type { SortKey } from './sort-parser.js';

/**
 * Filters and sorts as SQL over the `records` table, the same on both engines.
 *
 * A field is one or more *terms*: a column is itself; a data field is the three parts of its
 * JSON sort key (rank, text, number: see jsonSortKeyOf in src/db/dialect.ts). Every comparison is
 * a conjunction of tests on those terms, so it is type-strict by construction (`data.age >= 18`
 * is rank = number ∧ text = '' ∧ number ≥ 18) and can seek an index built over the same terms
 * (src/modules/indexes). Values are always bound parameters; only JSON paths are inlined, by the
 * dialect, as validated literals, because an expression index matches only the same text.
 */

export interface Term {
  /** Names the term, like `data.age#number`; the same key is the same SQL expression. */
  key: string;
  expression: Expression<unknown>;
  /** Whether the term can be NULL. NULL orders lowest: first ascending, last descending. */
  nullable: boolean;
}

export interface OrderTerm extends Term {
  desc: boolean;
}

const KEY_PARTS = ['rank', 'text', 'number'] as const satisfies readonly (keyof JsonSortKey)[];

export function fieldTerms(field: FieldRef, dialect: Dialect): Term[] {
  if (field.kind === 'column') return [{ key: field.name, expression: sql.ref(field.column), nullable: false }];
  const key = dialect.jsonSortKey(field.path);
  return KEY_PARTS.map((part) => ({ key: `${field.name}#${part}`, expression: key[part], nullable: true }));
}

/** The values of a field's terms for a value of the field (a column value, or a JSON value or undefined). */
function termValues(field: FieldRef, value: unknown): unknown[] {
  if (field.kind === 'column') return [value];
  const key = jsonSortKeyOf(value);
  return KEY_PARTS.map((part) => key[part]);
}

// ---------------------------------------------------------------------------------------------
// Filters

type Test =
  | { term: Term; op: '=' | '<' | '<=' | '>' | '>='; value: unknown }
  | { term: Term; op: 'is null' }
  | { term: Term; op: 'in'; values: unknown[] };

/** What a condition on one field compiles to: tests that must all hold, or another condition. */
type FieldCondition = { tests: Test[] } | { expression: Expression<SqlBool> };

/** `field = value` for every part of the value's key: the whole key equal, an index seek. */
function equalityTests(terms: Term[], values: unknown[]): Test[] {
  return terms.map((term, i) => (values[i] === null ? { term, op: 'is null' } : { term, op: '=', value: values[i] }));
}

function compileComparison(field: FieldRef, operator: ComparisonOperator, value: FilterValue, dialect: Dialect): FieldCondition {
  const terms = fieldTerms(field, dialect);
  const values = termValues(field, value);
  switch (operator) {
    case '=':
      return { tests: equalityTests(terms, values) };
    case '!=':
      // The plain negation of `=`, NULL counted as false first: a record without the field is != anything but null.
      return { expression: sql<SqlBool>`(not coalesce(${renderTests(equalityTests(terms, values))}, false))` };
    case '<':
    case '<=':
    case '>':
    case '>=': {
      if (field.kind === 'column') return { tests: [{ term: terms[0]!, op: operator, value }] };
      // Same type (and for numbers the constant text ''), then the range on the part that carries the value.
      const [rank, text, number] = terms as [Term, Term, Term];
      const [rankValue, textValue, numberValue] = values;
      return typeof value === 'number'
        ? { tests: [{ term: rank, op: '=', value: rankValue }, { term: text, op: '=', value: textValue }, { term: number, op: operator, value: numberValue }] }
        : { tests: [{ term: rank, op: '=', value: rankValue }, { term: text, op: operator, value: textValue }] };
    }
    case '~':
      return { expression: compileContains(field, value, dialect) };
    case '~*':
      return { expression: compileContainsIgnoringCase(field, value as string, dialect) };
    case '!~*':
      // The plain negation of `~*`, NULL counted as false first, as `!=` of `=`.
      return { expression: sql<SqlBool>`(not coalesce(${compileContainsIgnoringCase(field, value as string, dialect)}, false))` };
  }
}

/**
 * `~*`: a string field that contains the value, A–Z and a–z taken as equal. Both sides are
 * folded the same way (ASCII only, Dialect.foldAsciiCase), so the engines agree whatever their
 * locale; and the test is a substring search, not LIKE, so `%` and `_` in the value are text.
 */
function compileContainsIgnoringCase(field: FieldRef, value: string, dialect: Dialect): Expression<SqlBool> {
  if (field.kind === 'column') throw new Error('~* on a column is refused by the parser');
  const [rank, text] = fieldTerms(field, dialect) as [Term, Term, Term];
  const isString = renderTests([{ term: rank, op: '=', value: JSON_TYPE_RANK.string }]);
  const folded = dialect.foldAsciiCase(text.expression as Expression<string | null>);
  return sql<SqlBool>`(${isString} and ${dialect.textContains(folded, foldAsciiCase(value))})`;
}

/** `~`: a substring of a string field, or an element of an array field (see filter-parser.ts). */
function compileContains(field: FieldRef, value: FilterValue, dialect: Dialect): Expression<SqlBool> {
  if (field.kind === 'column') throw new Error('~ on a column is refused by the parser');
  const element = dialect.jsonArrayHasElement(field.path, value as JsonScalar);
  if (typeof value !== 'string') return element;
  const [rank, text] = fieldTerms(field, dialect) as [Term, Term, Term];
  const isString = renderTests([{ term: rank, op: '=', value: JSON_TYPE_RANK.string }]);
  return sql<SqlBool>`((${isString} and ${dialect.textContains(text.expression as Expression<string | null>, value)}) or ${element})`;
}

/**
 * `in`: the values grouped by type; within a group every key part but one is the same, so the
 * group is equality on those parts and `in (...)` on the one that differs.
 */
function compileIn(field: FieldRef, values: FilterValue[], dialect: Dialect): FieldCondition {
  if (values.length === 0) return { expression: sql<SqlBool>`false` };
  const terms = fieldTerms(field, dialect);
  const groups = new Map<unknown, unknown[][]>();
  for (const value of values) {
    const parts = termValues(field, value);
    const rank = field.kind === 'column' ? 'column' : parts[0];
    groups.set(rank, [...(groups.get(rank) ?? []), parts]);
  }
  const conditions = [...groups.values()].map((group): Test[] =>
    terms.map((term, i): Test => {
      const distinct = [...new Set(group.map((parts) => parts[i]))];
      if (distinct.length > 1) return { term, op: 'in', values: distinct };
      return distinct[0] === null ? { term, op: 'is null' } : { term, op: '=', value: distinct[0] };
    }),
  );
  if (conditions.length === 1) return { tests: conditions[0]! };
  return { expression: sql<SqlBool>`(${sql.join(conditions.map(renderTests), sql` or `)})` };
}

function renderTest(test: Test): Expression<SqlBool> {
  const { expression } = test.term;
  switch (test.op) {
    case 'is null':
      return sql<SqlBool>`${expression} is null`;
    case 'in':
      return sql<SqlBool>`${expression} in (${sql.join(test.values)})`;
    default:
      return sql<SqlBool>`${expression} ${sql.raw(test.op)} ${test.value}`;
  }
}

function renderTests(tests: Test[]): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.join(tests.map(renderTest), sql` and `)})`;
}

function compileNode(node: FilterNode, dialect: Dialect): FieldCondition {
  switch (node.type) {
    case 'and':
    case 'or': {
      const operands = node.operands.map((operand) => render(compileNode(operand, dialect)));
      return { expression: sql<SqlBool>`(${sql.join(operands, sql` ${sql.raw(node.type)} `)})` };
    }
    case 'compare':
      return compileComparison(node.field, node.operator, node.value, dialect);
    case 'in':
      return compileIn(node.field, node.values, dialect);
  }
}

const render = (condition: FieldCondition): Expression<SqlBool> => ('tests' in condition ? renderTests(condition.tests) : condition.expression);

/** The filter as a condition on a `records` row. */
export function compileFilter(node: FilterNode, dialect: Dialect): Expression<SqlBool> {
  return render(compileNode(node, dialect));
}

/**
 * Keys of the terms the filter holds to one value in every matching record (equality tests that
 * every match must pass). Ordering by such a term changes nothing, and leaving it out of ORDER BY
 * lets SQLite, which does not see that an expression pinned by `=` is ordered, read the rows in
 * index order: `data.age >= 18` sorted by data.age pins rank and text and walks the index on number.
 */
export function termsPinnedByFilter(node: FilterNode, dialect: Dialect): Set<string> {
  const conjuncts = node.type === 'and' ? node.operands : [node];
  const pinned = new Set<string>();
  for (const conjunct of conjuncts) {
    if (conjunct.type === 'and' || conjunct.type === 'or') continue;
    const condition = conjunct.type === 'in'
      ? compileIn(conjunct.field, conjunct.values, dialect)
      : compileComparison(conjunct.field, conjunct.operator, conjunct.value, dialect);
    if (!('tests' in condition)) continue;
    for (const test of condition.tests) if (test.op === '=' || test.op === 'is null') pinned.add(test.term.key);
  }
  return pinned;
}

// ---------------------------------------------------------------------------------------------
// Sorts and keyset pagination

const ID: FieldRef = { kind: 'column', name: 'id', column: 'id' };

/** The sort's keys, then id unless the sort has it: ties break by id, in the last key's direction. */
function keysWithTiebreak(sort: readonly SortKey[]): SortKey[] {
  if (sort.some((key) => key.field.kind === 'column' && key.field.name === 'id')) return [...sort];
  return [...sort, { field: ID, desc: sort[sort.length - 1]?.desc ?? false }];
}

/** What the rows are ordered by, term by term; a total order because it ends in id. */
export function orderTerms(sort: readonly SortKey[], dialect: Dialect): OrderTerm[] {
  return keysWithTiebreak(sort).flatMap((key) => fieldTerms(key.field, dialect).map((term) => ({ ...term, desc: key.desc })));
}

/** A row's values of orderTerms(sort), in the same order; `data` is the row's parsed data. */
export function orderValues(sort: readonly SortKey[], row: { id: string; created_at: string; updated_at: string }, data: unknown): unknown[] {
  return keysWithTiebreak(sort).flatMap((key) => termValues(key.field, fieldValueOf(key.field, row, data)));
}

/** What each term of orderTerms(sort) holds, without a dialect: for checking a cursor's values. */
export function orderTermKinds(sort: readonly SortKey[]): ('column' | keyof JsonSortKey)[] {
  return keysWithTiebreak(sort).flatMap((key) => (key.field.kind === 'column' ? ['column' as const] : KEY_PARTS));
}

/**
 * How a term is ordered: NULL lowest in both directions. Said explicitly for nullable terms,
 * because PostgreSQL's default is the reverse; not for columns, which are never NULL, so that
 * PostgreSQL still matches their plain btree indexes.
 */
export function orderModifiers(term: OrderTerm): OrderByModifiersCallbackExpression {
  if (!term.nullable) return (ob) => (term.desc ? ob.desc() : ob.asc());
  return (ob) => (term.desc ? ob.desc().nullsLast() : ob.asc().nullsFirst());
}

/**
 * Rows strictly after `values` in the order of `terms` (a cursor's position), NULL lowest:
 *   after(i) = beyond(term i) ∨ (same(term i) ∧ after(i + 1)),  after(end) = false.
 * A redundant bound on the first term comes first so the planner can start an index range there.
 */
export function keysetCondition(terms: readonly OrderTerm[], values: readonly unknown[]): Expression<SqlBool> {
  let after: Expression<SqlBool> | null = null;
  for (let i = terms.length - 1; i >= 0; i -= 1) {
    const term = terms[i]!;
    const value = values[i];
    const same = value === null ? sql<SqlBool>`${term.expression} is null` : sql<SqlBool>`${term.expression} = ${value}`;
    const beyond = beyondCondition(term, value);
    const rest: Expression<SqlBool> | null = after ? sql<SqlBool>`(${same} and ${after})` : null;
    after = beyond && rest ? sql<SqlBool>`(${beyond} or ${rest})` : (beyond ?? rest ?? sql<SqlBool>`false`);
  }
  if (!after) return sql<SqlBool>`false`;
  const bound = terms.length > 0 ? leadingBound(terms[0]!, values[0]) : null;
  return bound ? sql<SqlBool>`(${bound} and ${after})` : after;
}

/** Strictly beyond `value` on one term, or null when nothing is. */
function beyondCondition(term: OrderTerm, value: unknown): Expression<SqlBool> | null {
  if (!term.desc) return value === null ? sql<SqlBool>`${term.expression} is not null` : sql<SqlBool>`${term.expression} > ${value}`;
  if (value === null) return null; // descending, NULL is last: nothing comes after it
  return term.nullable ? sql<SqlBool>`(${term.expression} < ${value} or ${term.expression} is null)` : sql<SqlBool>`${term.expression} < ${value}`;
}

/** At or beyond `value` on the first term, when that is a simple range. */
function leadingBound(term: OrderTerm, value: unknown): Expression<SqlBool> | null {
  if (!term.desc) return value === null ? null : sql<SqlBool>`${term.expression} >= ${value}`;
  if (value === null) return sql<SqlBool>`${term.expression} is null`;
  return term.nullable ? null : sql<SqlBool>`${term.expression} <= ${value}`;
}
