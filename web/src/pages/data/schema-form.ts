import { LONG_TEXT_KEYWORD } from './schema-builder-fields.js';

/**
 * The record form's fields, read off the active schema's top-level properties: an input of the
 * right kind for each, and the checks the browser can make before the API makes them all (the
 * API's JSON Schema validation stays the judge; its errors are shown beside the fields too).
 */
export interface FormField {
  name: string;
  label: string;
  description: string | null;
  kind: 'text' | 'long-text' | 'email' | 'url' | 'date' | 'date-time' | 'integer' | 'number' | 'boolean' | 'choice' | 'json';
  required: boolean;
  choices: unknown[];
  minimum: number | null;
  maximum: number | null;
  minLength: number | null;
  maxLength: number | null;
  pattern: string | null;
}

type Rule = Record<string, unknown>;

/** Strings longer than this may hold, at most, get a text area rather than one line. */
export const LONG_TEXT_OVER = 200;

const STRING_KINDS: Record<string, FormField['kind']> = { email: 'email', uri: 'url', date: 'date', 'date-time': 'date-time' };

/** A string's input: by its format, else long text when marked so (the builder's "Long text") or allowed over 200 characters. */
function stringKind(rule: Rule): FormField['kind'] {
  if (typeof rule.format === 'string' && Object.hasOwn(STRING_KINDS, rule.format)) return STRING_KINDS[rule.format]!;
  const long = rule[LONG_TEXT_KEYWORD] === true || (typeof rule.maxLength === 'number' && rule.maxLength > LONG_TEXT_OVER);
  return long ? 'long-text' : 'text';
}

const numberOrNull = (value: unknown) => (typeof value === 'number' ? value : null);

/** The fields of a schema whose top level is an object with properties; null when there are none to show. */
export function formFields(schema: unknown): FormField[] | null {
  if (!schema || typeof schema !== 'object') return null;
  const { properties, required } = schema as { properties?: unknown; required?: unknown };
  if (!properties || typeof properties !== 'object' || Array.isArray(properties)) return null;
  const requiredNames = new Set(Array.isArray(required) ? required.filter((name): name is string => typeof name === 'string') : []);
  const fields = Object.entries(properties as Record<string, unknown>).map(([name, value]) => fieldOf(name, (value ?? {}) as Rule, requiredNames.has(name)));
  return fields.length ? fields : null;
}

function fieldOf(name: string, rule: Rule, required: boolean): FormField {
  const types = Array.isArray(rule.type) ? rule.type.filter((type) => type !== 'null') : [rule.type];
  const type = types.length === 1 ? types[0] : undefined;
  const kind: FormField['kind'] = Array.isArray(rule.enum)
    ? 'choice'
    : type === 'string'
      ? stringKind(rule)
      : type === 'integer' || type === 'number' || type === 'boolean'
        ? type
        : 'json';
  return {
    name,
    label: typeof rule.title === 'string' ? rule.title : name,
    description: typeof rule.description === 'string' ? rule.description : null,
    kind,
    required,
    choices: Array.isArray(rule.enum) ? rule.enum : [],
    minimum: numberOrNull(rule.minimum),
    maximum: numberOrNull(rule.maximum),
    minLength: numberOrNull(rule.minLength),
    maxLength: numberOrNull(rule.maxLength),
    pattern: typeof rule.pattern === 'string' ? rule.pattern : null,
  };
}

/** What is wrong with one field's value, in the API's manner ("must be >= 0"), or null. */
export function fieldProblem(field: FormField, value: unknown): string | null {
  if (value === undefined) return field.required ? 'is required' : null;
  switch (field.kind) {
    case 'integer':
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (field.kind === 'integer' && !Number.isInteger(value)) return 'must be a whole number';
      if (field.minimum !== null && value < field.minimum) return `must be >= ${field.minimum}`;
      if (field.maximum !== null && value > field.maximum) return `must be <= ${field.maximum}`;
      return null;
    case 'text':
    case 'long-text':
    case 'email':
    case 'url':
    case 'date':
    case 'date-time': {
      if (typeof value !== 'string') return 'must be text';
      const length = [...value].length;
      if (field.minLength !== null && length < field.minLength) return field.minLength === 1 ? 'must not be empty' : `must be at least ${field.minLength} characters`;
      if (field.maxLength !== null && length > field.maxLength) return `must be at most ${field.maxLength} characters`;
      if (field.pattern !== null && !matches(field.pattern, value)) return `must match ${field.pattern}`;
      return null;
    }
    case 'choice':
      return field.choices.some((choice) => JSON.stringify(choice) === JSON.stringify(value)) ? null : 'must be one of the choices';
    default:
      return null;
  }
}

/** A pattern the browser cannot read (JSON Schema's dialect differs a little) is left to the API. */
function matches(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(value);
  } catch {
    return true;
  }
}
