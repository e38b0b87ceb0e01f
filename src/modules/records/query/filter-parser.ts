import { AppError } from '../../../errors.js';
import { parseFieldRef, type FieldRef } from './field-ref.js';
import { unstorableTextReason } from '../../../storable-text.js';

/**
 * The record filter language of docs/design.md §5, e.g.
 *   data.age >= 18 && (data.status = "open" || data.vip = true)
 *
 *   filter     := or END
 *   or         := and ( "||" and )*             && binds tighter than ||
 *   and        := primary ( "&&" primary )*
 *   primary    := "(" or ")" | condition
 *   condition  := field operator value | field "in" "[" ( value ( "," value )* )? "]"
 *   operator   := "=" | "!=" | ">" | ">=" | "<" | "<=" | "~" | "~*" | "!~*"
 *   field      := "data." segment ( "." segment )* | "id" | "createdAt" | "updatedAt"
 *   value      := JSON string (double quotes, JSON escapes) | JSON number | true | false | null
 *
 * What each operator means (compile.ts makes it so on both engines):
 * - Comparisons are type-strict: `data.age >= 18` matches only records whose age is a number
 *   ≥ 18; `data.age = "18"` only those where it is the string "18". Strings compare by code point.
 * - `= null` matches a field that is null or missing; `!= null` one that has a value.
 * - `!=` is exactly the negation of `=`: `data.status != "open"` also matches records without a
 *   status, or with a status that is not a string.
 * - `<`, `<=`, `>`, `>=` take a number or a string.
 * - `~` (contains): when the field is a string and the value a string, a case-sensitive substring
 *   test; when the field is an array, whether one of its elements equals the value (type-strict).
 * - `~*` (contains, ignoring case): when the field is a string, whether it contains the value, a
 *   string, with the letters A–Z and a–z taken as equal (other letters compare exactly, the same
 *   on both engines whatever their locale); anything else matches nothing. The value is plain
 *   text, never a pattern: `%` and `_` are themselves.
 * - `!~*` is exactly the negation of `~*`: a record without the field, or whose field is not a
 *   string, matches it.
 * - `in [a, b]` is `= a || = b`; an empty list matches nothing.
 * - id, createdAt and updatedAt take strings (timestamps are ISO 8601 text, so
 *   `createdAt >= "2026-01-01"` works) and do not take `~`, `~*` or `!~*`.
 *
 * Errors are INVALID_REQUEST with details {field: "filter", position, expected?, found?};
 * `position` is the 0-based offset in the text where the filter went wrong.
 */

export type FilterValue = string | number | boolean | null;
export type ComparisonOperator = '=' | '!=' | '>' | '>=' | '<' | '<=' | '~' | '~*' | '!~*';

export type FilterNode =
  | { type: 'and'; operands: FilterNode[] }
  | { type: 'or'; operands: FilterNode[] }
  | { type: 'compare'; field: FieldRef; operator: ComparisonOperator; value: FilterValue }
  | { type: 'in'; field: FieldRef; values: FilterValue[] };

export const FILTER_LIMITS = { maxLength: 4096, maxDepth: 32, maxInValues: 1000 } as const;

type Token =
  | { kind: 'word'; text: string; position: number }
  | { kind: 'string'; value: string; position: number }
  | { kind: 'number'; value: number; text: string; position: number }
  | { kind: 'operator'; operator: ComparisonOperator; position: number }
  | { kind: '&&' | '||' | '(' | ')' | '[' | ']' | ',' | 'end'; position: number };

function filterError(position: number, message: string, details: Record<string, unknown> = {}): AppError {
  return new AppError('INVALID_REQUEST', `Invalid filter at position ${position}: ${message}.`, { field: 'querystring.filter', position, ...details });
}

function describe(token: Token): string {
  switch (token.kind) {
    case 'word': return `'${token.text}'`;
    case 'string': return 'a string';
    case 'number': return `the number ${token.text}`;
    case 'operator': return `'${token.operator}'`;
    case 'end': return 'the end of the filter';
    default: return `'${token.kind}'`;
  }
}

// ---------------------------------------------------------------------------------------------
// Tokenizer

const WORD = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]*)*/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
// Longest first: `!~*` before `!=`'s neighbour `~*`, and `~*` before `~`.
const OPERATORS: ComparisonOperator[] = ['!~*', '!=', '>=', '<=', '=', '>', '<', '~*', '~'];
const PUNCTUATION = ['&&', '||', '(', ')', '[', ']', ','] as const;
const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const char = text[at]!;
    if (char === ' ' || char === '\t' || char === '\n' || char === '\r') {
      at += 1;
      continue;
    }
    const punctuation = PUNCTUATION.find((p) => text.startsWith(p, at));
    if (punctuation) {
      tokens.push({ kind: punctuation, position: at });
      at += punctuation.length;
      continue;
    }
    const operator = OPERATORS.find((op) => text.startsWith(op, at));
    if (operator) {
      tokens.push({ kind: 'operator', operator, position: at });
      at += operator.length;
      continue;
    }
    if (char === '"') {
      const { value, end } = readString(text, at);
      tokens.push({ kind: 'string', value, position: at });
      at = end;
      continue;
    }
    if (char === '-' || (char >= '0' && char <= '9')) {
      const { value, end } = readNumber(text, at);
      tokens.push({ kind: 'number', value, text: text.slice(at, end), position: at });
      at = end;
      continue;
    }
    WORD.lastIndex = at;
    const word = WORD.exec(text);
    if (word) {
      tokens.push({ kind: 'word', text: word[0], position: at });
      at += word[0].length;
      continue;
    }
    throw filterError(at, unexpectedCharacterMessage(char), { found: char });
  }
  tokens.push({ kind: 'end', position: text.length });
  return tokens;
}

function unexpectedCharacterMessage(char: string): string {
  if (char === "'") return "unexpected character \"'\"; strings take double quotes";
  if (char === '&' || char === '|') return `unexpected character '${char}'; did you mean '${char}${char}'?`;
  if (char === '!') return "unexpected character '!'; the operators with '!' are '!=' and '!~*'";
  return `unexpected character ${JSON.stringify(char)}`;
}

/** A JSON string starting at `start` (the opening quote). */
function readString(text: string, start: number): { value: string; end: number } {
  let value = '';
  let at = start + 1;
  while (at < text.length) {
    const char = text[at]!;
    if (char === '"') return { value: checkStorable(value, start), end: at + 1 };
    if (char < ' ') throw filterError(at, 'control characters in a string must be escaped (like \\n)');
    if (char !== '\\') {
      value += char;
      at += 1;
      continue;
    }
    const escape = text[at + 1];
    if (escape !== undefined && Object.hasOwn(SIMPLE_ESCAPES, escape)) {
      value += SIMPLE_ESCAPES[escape];
      at += 2;
    } else if (escape === 'u' && /^[0-9A-Fa-f]{4}$/.test(text.slice(at + 2, at + 6))) {
      value += String.fromCharCode(parseInt(text.slice(at + 2, at + 6), 16));
      at += 6;
    } else {
      throw filterError(at, 'invalid escape; use \\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX', { expected: 'an escape sequence' });
    }
  }
  throw filterError(start, 'the string is not closed', { expected: '"' });
}

function checkStorable(value: string, start: number): string {
  const reason = unstorableTextReason(value);
  if (reason) throw filterError(start, `a string ${reason}`);
  return value;
}

function readNumber(text: string, start: number): { value: number; end: number } {
  NUMBER.lastIndex = start;
  const match = NUMBER.exec(text);
  const end = start + (match?.[0].length ?? 0);
  if (!match || /[A-Za-z0-9_.]/.test(text[end] ?? '')) {
    throw filterError(start, 'invalid number; numbers are written as in JSON, like 18, -2.5 or 1e6', { expected: 'a number' });
  }
  const value = Number(match[0]);
  if (!Number.isFinite(value)) throw filterError(start, 'the number is too large');
  return { value, end };
}

// ---------------------------------------------------------------------------------------------
// Parser

const EXPECTED_VALUE = 'a value (a string, number, true, false or null)';
const EXPECTED_FIELD = "a field (data.<path>, id, createdAt or updatedAt) or '('";
const EXPECTED_OPERATOR = 'an operator (=, !=, >, >=, <, <=, ~, ~*, !~* or in)';
const KEYWORD_VALUES: Record<string, FilterValue> = { true: true, false: false, null: null };

export function parseFilter(text: string): FilterNode {
  if (text.length > FILTER_LIMITS.maxLength) {
    throw filterError(FILTER_LIMITS.maxLength, `a filter has at most ${FILTER_LIMITS.maxLength} characters`, { limit: FILTER_LIMITS.maxLength });
  }
  return new Parser(tokenize(text)).parseFilter();
}

class Parser {
  private index = 0;

  constructor(private readonly tokens: Token[]) {}

  parseFilter(): FilterNode {
    const node = this.parseOr(0);
    const next = this.peek();
    if (next.kind !== 'end') {
      const expected = next.kind === ')' ? "no ')' here: it closes nothing" : "'&&', '||' or the end of the filter";
      throw this.unexpected(next, expected);
    }
    return node;
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private next(): Token {
    const token = this.tokens[this.index]!;
    if (token.kind !== 'end') this.index += 1;
    return token;
  }

  private unexpected(token: Token, expected: string): AppError {
    return filterError(token.position, `expected ${expected} but found ${describe(token)}`, { expected, found: describe(token) });
  }

  private parseOr(depth: number): FilterNode {
    const operands = [this.parseAnd(depth)];
    while (this.peek().kind === '||') {
      this.next();
      operands.push(this.parseAnd(depth));
    }
    return combine('or', operands);
  }

  private parseAnd(depth: number): FilterNode {
    const operands = [this.parsePrimary(depth)];
    while (this.peek().kind === '&&') {
      this.next();
      operands.push(this.parsePrimary(depth));
    }
    return combine('and', operands);
  }

  private parsePrimary(depth: number): FilterNode {
    const token = this.next();
    if (token.kind === '(') {
      if (depth + 1 > FILTER_LIMITS.maxDepth) {
        throw filterError(token.position, `parentheses nest at most ${FILTER_LIMITS.maxDepth} deep`, { limit: FILTER_LIMITS.maxDepth });
      }
      const inner = this.parseOr(depth + 1);
      const close = this.next();
      if (close.kind !== ')') throw this.unexpected(close, "')'");
      return inner;
    }
    if (token.kind !== 'word' || Object.hasOwn(KEYWORD_VALUES, token.text) || token.text === 'in') throw this.unexpected(token, EXPECTED_FIELD);
    const parsed = parseFieldRef(token.text);
    if (!parsed.ok) throw filterError(token.position, parsed.reason, { expected: EXPECTED_FIELD, found: describe(token) });
    return this.parseCondition(parsed.field);
  }

  private parseCondition(field: FieldRef): FilterNode {
    const token = this.next();
    if (token.kind === 'word' && token.text === 'in') return { type: 'in', field, values: this.parseList(field) };
    if (token.kind !== 'operator') throw this.unexpected(token, EXPECTED_OPERATOR);
    if (CONTAINS_OPERATORS.has(token.operator) && field.kind === 'column') {
      throw filterError(token.position, `'${token.operator}' applies to data fields, not to ${field.name}`, { expected: EXPECTED_OPERATOR, found: `'${token.operator}'` });
    }
    const value = this.parseValue();
    checkValueFits(field, token.operator, value);
    return { type: 'compare', field, operator: token.operator, value: value.value };
  }

  private parseList(field: FieldRef): FilterValue[] {
    const open = this.next();
    if (open.kind !== '[') throw this.unexpected(open, "'[' to start the list of values");
    const values: FilterValue[] = [];
    if (this.peek().kind === ']') {
      this.next();
      return values;
    }
    for (;;) {
      const value = this.parseValue();
      if (values.length === FILTER_LIMITS.maxInValues) {
        throw filterError(value.position, `an 'in' list has at most ${FILTER_LIMITS.maxInValues} values`, { limit: FILTER_LIMITS.maxInValues });
      }
      checkValueFits(field, 'in', value);
      values.push(value.value);
      const separator = this.next();
      if (separator.kind === ']') return values;
      if (separator.kind !== ',') throw this.unexpected(separator, "',' or ']'");
    }
  }

  private parseValue(): { value: FilterValue; position: number } {
    const token = this.next();
    if (token.kind === 'string' || token.kind === 'number') return { value: token.value, position: token.position };
    if (token.kind === 'word' && Object.hasOwn(KEYWORD_VALUES, token.text)) return { value: KEYWORD_VALUES[token.text]!, position: token.position };
    throw this.unexpected(token, EXPECTED_VALUE);
  }
}

const CONTAINS_OPERATORS: ReadonlySet<ComparisonOperator> = new Set(['~', '~*', '!~*']);

/** Refuses comparisons that could never mean anything, so the caller learns of the mistake. */
function checkValueFits(field: FieldRef, operator: ComparisonOperator | 'in', { value, position }: { value: FilterValue; position: number }): void {
  if (field.kind === 'column' && typeof value !== 'string') {
    const expected = `a string (${field.name} is text${field.name === 'id' ? '' : ', an ISO 8601 time'})`;
    throw filterError(position, `${field.name} compares with strings only`, { expected, found: JSON.stringify(value) });
  }
  if ((operator === '~*' || operator === '!~*') && typeof value !== 'string') {
    throw filterError(position, `'${operator}' looks for a string, not ${JSON.stringify(value)}`, { expected: 'a string', found: JSON.stringify(value) });
  }
  const ordering = operator === '<' || operator === '<=' || operator === '>' || operator === '>=';
  if (ordering && typeof value !== 'number' && typeof value !== 'string') {
    throw filterError(position, `'${operator}' compares with a number or a string, not ${JSON.stringify(value)}`, {
      expected: 'a number or a string',
      found: JSON.stringify(value),
    });
  }
}

/** Joins operands of the same connective into one node; a single operand stands alone. */
function combine(type: 'and' | 'or', operands: FilterNode[]): FilterNode {
  if (operands.length === 1) return operands[0]!;
  return { type, operands: operands.flatMap((operand) => (operand.type === type ? operand.operands : [operand])) };
}
