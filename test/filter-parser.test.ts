import { describe, expect, it } from 'vitest';
import { AppError } from '../src/errors.js';
import { FILTER_LIMITS, parseFilter, type FilterNode } from '../src/modules/records/query/filter-parser.js';
import { DEFAULT_SORT, formatSort, parseSort } from '../src/modules/records/query/sort-parser.js';

const data = (...path: string[]) => ({ kind: 'data', name: ['data', ...path].join('.'), path });
const column = (name: 'id' | 'createdAt' | 'updatedAt') => ({
  kind: 'column',
  name,
  column: { id: 'id', createdAt: 'created_at', updatedAt: 'updated_at' }[name],
});

/** A compact view of a parsed filter: `(a && (b || c))`, comparisons as `field op json`. */
function show(node: FilterNode): string {
  switch (node.type) {
    case 'and':
    case 'or':
      return `(${node.operands.map(show).join(node.type === 'and' ? ' && ' : ' || ')})`;
    case 'compare':
      return `${node.field.name} ${node.operator} ${JSON.stringify(node.value)}`;
    case 'in':
      return `${node.field.name} in ${JSON.stringify(node.values)}`;
  }
}

function failure(parse: () => unknown): AppError {
  try {
    parse();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected the text to be refused');
}

describe('parseFilter', () => {
  it('reads one comparison into a field, an operator and a value', () => {
    expect(parseFilter('data.age >= 18')).toEqual({ type: 'compare', field: data('age'), operator: '>=', value: 18 });
    expect(parseFilter('createdAt < "2026-01-01"')).toEqual({ type: 'compare', field: column('createdAt'), operator: '<', value: '2026-01-01' });
    expect(parseFilter('data.tags in ["a", 1, true, null]')).toEqual({ type: 'in', field: data('tags'), values: ['a', 1, true, null] });
  });

  it.each([
    ['data.a = 1', 'data.a = 1'],
    ['data.a != 1', 'data.a != 1'],
    ['data.a > 1', 'data.a > 1'],
    ['data.a >= 1', 'data.a >= 1'],
    ['data.a < 1', 'data.a < 1'],
    ['data.a <= 1', 'data.a <= 1'],
    ['data.a ~ "x"', 'data.a ~ "x"'],
    ['data.a~1', 'data.a ~ 1'],
    ['data.a ~* "X"', 'data.a ~* "X"'],
    ['data.a~*"x"', 'data.a ~* "x"'],
    ['data.a !~* "x"', 'data.a !~* "x"'],
    ['data.a!~*"%_"', 'data.a !~* "%_"'],
    ['data.a=true', 'data.a = true'],
    ['data.a = false', 'data.a = false'],
    ['data.a = null', 'data.a = null'],
    ['data.a != null', 'data.a != null'],
    ['data.a in []', 'data.a in []'],
    ['data.a in [ "x" ]', 'data.a in ["x"]'],
    ['data.address.city = "Oslo"', 'data.address.city = "Oslo"'],
    ['data._private_1.X9 = 0', 'data._private_1.X9 = 0'],
    ['id = "rec_1"', 'id = "rec_1"'],
    ['id in ["rec_1", "rec_2"]', 'id in ["rec_1","rec_2"]'],
    ['updatedAt >= "2026"', 'updatedAt >= "2026"'],
    ['data.n = -2.5e3', 'data.n = -2500'],
    ['data.n = 0', 'data.n = 0'],
    ['data.n = -0.25', 'data.n = -0.25'],
    ['data.n = 1E+2', 'data.n = 100'],
    ['  data.a = 1\n\t', 'data.a = 1'],
    ['data.a = "" ', 'data.a = ""'],
  ])('accepts %j', (text, shown) => {
    expect(show(parseFilter(text))).toBe(shown);
  });

  it('binds && tighter than ||', () => {
    expect(show(parseFilter('data.a = 1 || data.b = 2 && data.c = 3'))).toBe('(data.a = 1 || (data.b = 2 && data.c = 3))');
    expect(show(parseFilter('data.a = 1 && data.b = 2 || data.c = 3'))).toBe('((data.a = 1 && data.b = 2) || data.c = 3)');
  });

  it('lets parentheses group, and flattens chains of one connective', () => {
    expect(show(parseFilter('(data.a = 1 || data.b = 2) && data.c = 3'))).toBe('((data.a = 1 || data.b = 2) && data.c = 3)');
    expect(show(parseFilter('data.a = 1 && (data.b = 2 && data.c = 3) && data.d = 4'))).toBe('(data.a = 1 && data.b = 2 && data.c = 3 && data.d = 4)');
    expect(show(parseFilter('((((data.a = 1))))'))).toBe('data.a = 1');
    expect(show(parseFilter('data.age >= 18 && (data.status = "open" || data.vip = true)'))).toBe(
      '(data.age >= 18 && (data.status = "open" || data.vip = true))',
    );
  });

  it('reads strings with every JSON escape', () => {
    const value = (text: string) => (parseFilter(`data.s = ${text}`) as { value: unknown }).value;
    expect(value(String.raw`"a\"b\\c\/d"`)).toBe('a"b\\c/d');
    expect(value(String.raw`"\b\f\n\r\t"`)).toBe('\b\f\n\r\t');
    expect(value(String.raw`"\u00e9\u00E9"`)).toBe('éé');
    expect(value(String.raw`"\ud83d\ude00"`)).toBe('😀');
    expect(value('"😀 && || ( ) [ ]"')).toBe('😀 && || ( ) [ ]');
  });

  it('takes nesting up to the limit', () => {
    const depth = FILTER_LIMITS.maxDepth;
    expect(show(parseFilter(`${'('.repeat(depth)}data.a = 1${')'.repeat(depth)}`))).toBe('data.a = 1');
    const values = Array.from({ length: FILTER_LIMITS.maxInValues }, (_, i) => i);
    expect(parseFilter(`data.a in [${values.join(',')}]`)).toMatchObject({ values });
    expect(() => parseFilter(`data.s = "${'x'.repeat(FILTER_LIMITS.maxLength - 11)}"`)).not.toThrow();
  });

  const tooDeep = `${'('.repeat(FILTER_LIMITS.maxDepth + 1)}data.a = 1${')'.repeat(FILTER_LIMITS.maxDepth + 1)}`;
  const tooMany = `data.a in [${Array.from({ length: FILTER_LIMITS.maxInValues + 1 }, () => '1').join(',')}]`;

  it.each([
    // [text, position, part of the message]
    ['', 0, "expected a field (data.<path>, id, createdAt or updatedAt) or '(' but found the end of the filter"],
    ['   ', 3, 'expected a field'],
    ['data.a', 6, 'expected an operator (=, !=, >, >=, <, <=, ~, ~*, !~* or in) but found the end of the filter'],
    ['data.a = ', 9, 'expected a value (a string, number, true, false or null) but found the end of the filter'],
    ['data.a = 1 data.b = 2', 11, "expected '&&', '||' or the end of the filter but found 'data.b'"],
    ['data.a = 1 &&', 13, 'expected a field'],
    ['data.a = 1 || || data.b = 2', 14, "expected a field (data.<path>, id, createdAt or updatedAt) or '(' but found '||'"],
    ['(data.a = 1', 11, "expected ')' but found the end of the filter"],
    ['data.a = 1)', 10, "no ')' here: it closes nothing"],
    ['()', 1, "but found ')'"],
    ['data.a & data.b', 7, "unexpected character '&'; did you mean '&&'?"],
    ['data.a = 1 | data.b = 2', 11, "did you mean '||'?"],
    ['data.a ! 1', 7, "the operators with '!' are '!=' and '!~*'"],
    ["data.a = 'x'", 9, 'strings take double quotes'],
    ['data.a = #', 9, 'unexpected character "#"'],
    ['data.a == 1', 8, "expected a value (a string, number, true, false or null) but found '='"],
    ['data.a = "abc', 9, 'the string is not closed'],
    ['data.a = "a\\qb"', 11, 'invalid escape'],
    ['data.a = "\\u12g4"', 10, 'invalid escape'],
    ['data.a = "a\nb"', 11, 'control characters in a string must be escaped'],
    ['data.a = "\\u0000"', 9, 'NUL character'],
    ['data.a = "\\ud800"', 9, 'lone surrogate'],
    ['data.a = 01', 9, 'invalid number'],
    ['data.a = 1.', 9, 'invalid number'],
    ['data.a = .5', 9, 'unexpected character "."'],
    ['data.a = -', 9, 'invalid number'],
    ['data.a = 1e', 9, 'invalid number'],
    ['data.a = 12abc', 9, 'invalid number'],
    ['data.a = 1e999', 9, 'the number is too large'],
    ['data.a = open', 9, "expected a value (a string, number, true, false or null) but found 'open'"],
    ['name = "x"', 0, "unknown field 'name'"],
    ['data = 1', 0, "'data' needs a path"],
    ['data. = 1', 0, "'' is not a valid path segment"],
    ['data.1a = 1', 0, "'1a' is not a valid path segment"],
    ['data.a..b = 1', 0, 'not a valid path segment'],
    [`data.${Array.from({ length: 17 }, () => 'a').join('.')} = 1`, 0, 'at most 16 segments'],
    [`data.${'a'.repeat(65)} = 1`, 0, 'at most 64 characters'],
    ['true = 1', 0, "expected a field (data.<path>, id, createdAt or updatedAt) or '(' but found 'true'"],
    ['data.a 1', 7, 'expected an operator (=, !=, >, >=, <, <=, ~, ~*, !~* or in) but found the number 1'],
    ['data.a in 1', 10, "expected '[' to start the list of values but found the number 1"],
    ['data.a in [1 2]', 13, "expected ',' or ']' but found the number 2"],
    ['data.a in [1,]', 13, "expected a value (a string, number, true, false or null) but found ']'"],
    ['data.a in [1', 12, "expected ',' or ']' but found the end of the filter"],
    ['data.a > true', 9, "'>' compares with a number or a string, not true"],
    ['data.a <= null', 10, "'<=' compares with a number or a string, not null"],
    ['id = 1', 5, 'id compares with strings only'],
    ['createdAt > null', 12, 'createdAt compares with strings only'],
    ['id in ["a", 2]', 12, 'id compares with strings only'],
    ['updatedAt ~ "x"', 10, "'~' applies to data fields, not to updatedAt"],
    ['createdAt ~* "x"', 10, "'~*' applies to data fields, not to createdAt"],
    ['id !~* "x"', 3, "'!~*' applies to data fields, not to id"],
    ['data.a ~* 1', 10, "'~*' looks for a string, not 1"],
    ['data.a !~* null', 11, "'!~*' looks for a string, not null"],
    ['data.a ! ~* "x"', 7, "the operators with '!' are '!=' and '!~*'"],
    [tooDeep, FILTER_LIMITS.maxDepth, `parentheses nest at most ${FILTER_LIMITS.maxDepth} deep`],
    [tooMany, 11 + 2 * FILTER_LIMITS.maxInValues, `at most ${FILTER_LIMITS.maxInValues} values`],
    ['x'.repeat(FILTER_LIMITS.maxLength + 1), FILTER_LIMITS.maxLength, `at most ${FILTER_LIMITS.maxLength} characters`],
  ])('refuses %j at position %i', (text, position, message) => {
    const error = failure(() => parseFilter(text));
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.status).toBe(400);
    expect(error.details).toMatchObject({ field: 'querystring.filter', position });
    expect(error.message).toContain(`at position ${position}`);
    expect(error.message).toContain(message);
  });

  it('says what it expected and what it found', () => {
    expect(failure(() => parseFilter('data.a = )')).details).toEqual({
      field: 'querystring.filter',
      position: 9,
      expected: 'a value (a string, number, true, false or null)',
      found: "')'",
    });
  });
});

describe('parseSort', () => {
  it('is oldest first by id without a sort', () => {
    expect(parseSort(undefined)).toEqual(DEFAULT_SORT);
    expect(parseSort('')).toEqual(DEFAULT_SORT);
    expect(parseSort(undefined)).toEqual([{ field: column('id'), desc: false }]);
  });

  it('reads fields in order, - for descending', () => {
    expect(parseSort('-createdAt, data.name,data.address.city , -id')).toEqual([
      { field: column('createdAt'), desc: true },
      { field: data('name'), desc: false },
      { field: data('address', 'city'), desc: false },
      { field: column('id'), desc: true },
    ]);
    expect(formatSort(parseSort('-createdAt, data.name'))).toBe('-createdAt,data.name');
  });

  it.each([
    ['data.a,,id', 7, 'expected a field between the commas'],
    ['id,', 3, 'expected a field between the commas'],
    ['-', 1, "unknown field ''"],
    ['name', 0, "unknown field 'name'"],
    ['data.a, -data.1', 9, "'1' is not a valid path segment"],
    ['+id', 0, "unknown field '+id'"],
    ['data.a,data.a', 7, 'data.a appears twice'],
    ['id,data.a,data.b,data.c,data.d', 24, 'at most 4 fields'],
  ])('refuses %j at position %i', (text, position, message) => {
    const error = failure(() => parseSort(text));
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.details).toMatchObject({ field: 'querystring.sort', position });
    expect(error.message).toContain(message);
  });
});
