/**
 * The schema builder's model: a list of fields, each a property of the record, and the JSON
 * Schema they stand for, both ways. Pure, so that the builder and the JSON tab can be kept in step
 * and the round trip tested (fields → schema → fields is the identity for what it represents).
 *
 * A schema the builder cannot represent exactly (a keyword it has no control for, a type it does
 * not know) is not half-read: `fieldsOfSchema` says which property is the reason, and the JSON
 * stays the one to edit.
 */

export type BuilderKind =
  | 'text'
  | 'long-text'
  | 'email'
  | 'url'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'date'
  | 'date-time'
  | 'choice'
  | 'text-list'
  | 'object';

export interface BuilderField {
  name: string;
  kind: BuilderKind;
  required: boolean;
  /** Length for text, value for numbers, item count for lists; null where unset or not applicable. */
  min: number | null;
  max: number | null;
  /** Text and long text only. */
  pattern: string | null;
  /** Choice only: the allowed texts. */
  choices: string[];
  /** Object only: its own fields. */
  fields: BuilderField[];
}

export const KIND_LABELS: Record<BuilderKind, string> = {
  text: 'Text',
  'long-text': 'Long text',
  email: 'Email',
  url: 'URL',
  number: 'Number',
  integer: 'Whole number',
  boolean: 'Yes / no',
  date: 'Date',
  'date-time': 'Date and time',
  choice: 'Choice',
  'text-list': 'List of texts',
  object: 'Group of fields',
};

/**
 * Marks a string as long text: the record form gives it a text area. An annotation JSON Schema
 * ignores when validating (so records are checked the same with or without it).
 */
export const LONG_TEXT_KEYWORD = 'x-long-text';

const STRING_FORMATS: Partial<Record<BuilderKind, string>> = { email: 'email', url: 'uri', date: 'date', 'date-time': 'date-time' };
const TEXT_KINDS: ReadonlySet<BuilderKind> = new Set(['text', 'long-text', 'email', 'url']);
const PATTERN_KINDS: ReadonlySet<BuilderKind> = new Set(['text', 'long-text']);

/** Which limits a kind has, and what they are called in the schema; null where it has none. */
export function limitKeywords(kind: BuilderKind): { min: string; max: string; unit: string } | null {
  if (TEXT_KINDS.has(kind)) return { min: 'minLength', max: 'maxLength', unit: 'characters' };
  if (kind === 'number' || kind === 'integer') return { min: 'minimum', max: 'maximum', unit: 'value' };
  if (kind === 'text-list') return { min: 'minItems', max: 'maxItems', unit: 'items' };
  return null;
}

export const hasPattern = (kind: BuilderKind): boolean => PATTERN_KINDS.has(kind);

export function newField(name = ''): BuilderField {
  return { name, kind: 'text', required: false, min: null, max: null, pattern: null, choices: [], fields: [] };
}

/** A field changed to another kind keeps only what the new kind can hold. */
export function withKind(field: BuilderField, kind: BuilderKind): BuilderField {
  const limits = limitKeywords(kind) && limitKeywords(field.kind)?.unit === limitKeywords(kind)?.unit;
  return {
    ...field,
    kind,
    min: limits ? field.min : null,
    max: limits ? field.max : null,
    pattern: hasPattern(kind) ? field.pattern : null,
    choices: kind === 'choice' ? field.choices : [],
    fields: kind === 'object' ? field.fields : [],
  };
}

/** The JSON Schema of a record with these fields (an object; unknown properties allowed, as before). */
export function schemaOfFields(fields: BuilderField[]): Record<string, unknown> {
  return objectRule(fields);
}

function objectRule(fields: BuilderField[]): Record<string, unknown> {
  // fromEntries makes own properties even for a name like "__proto__".
  const rule: Record<string, unknown> = { type: 'object', properties: Object.fromEntries(fields.map((field) => [field.name, ruleOf(field)])) };
  const required = fields.filter((field) => field.required).map((field) => field.name);
  if (required.length) rule.required = required;
  return rule;
}

function ruleOf(field: BuilderField): Record<string, unknown> {
  if (field.kind === 'object') return objectRule(field.fields);
  const rule: Record<string, unknown> =
    field.kind === 'choice'
      ? { type: 'string', enum: [...field.choices] }
      : field.kind === 'text-list'
        ? { type: 'array', items: { type: 'string' } }
        : { type: field.kind === 'number' || field.kind === 'integer' || field.kind === 'boolean' ? field.kind : 'string' };
  const format = STRING_FORMATS[field.kind];
  if (format) rule.format = format;
  if (field.kind === 'long-text') rule[LONG_TEXT_KEYWORD] = true;
  const limits = limitKeywords(field.kind);
  if (limits && field.min !== null) rule[limits.min] = field.min;
  if (limits && field.max !== null) rule[limits.max] = field.max;
  if (hasPattern(field.kind) && field.pattern !== null) rule.pattern = field.pattern;
  return rule;
}

export type BuilderReading = { fields: BuilderField[]; problem: null } | { fields: null; problem: string };

/**
 * The builder's fields for a schema, or why it cannot show them. Read leniently, then written back:
 * only when that gives the same schema is the reading exact, so the builder never drops a keyword.
 */
export function fieldsOfSchema(schema: unknown): BuilderReading {
  if (!isObject(schema)) return { fields: null, problem: 'The schema is not a JSON object.' };
  const reason = unrepresentable(schema, '');
  if (reason) return { fields: null, problem: reason };
  return { fields: readObject(schema), problem: null };
}

/** The first reason the builder cannot represent `rule` (an object rule) exactly, or null. */
function unrepresentable(rule: Record<string, unknown>, path: string): string | null {
  const where = path ? `The field ${path}` : 'The schema';
  if (rule.type !== 'object') return `${where} is not of type "object".`;
  const properties = rule.properties ?? {};
  if (!isObject(properties)) return `${where} has "properties" that is not an object.`;
  for (const [name, child] of Object.entries(properties)) {
    const childPath = path ? `${path}.${name}` : name;
    if (!isObject(child)) return `The field ${childPath} is not described by an object.`;
    if (child.type === 'object') {
      const inner = unrepresentable(child, childPath);
      if (inner) return inner;
    } else if (!sameJson(ruleOf(readField(name, child, false)), child)) {
      return `The field ${childPath} uses a type or keyword the builder has no control for.`;
    }
  }
  const required = rule.required ?? [];
  if (!Array.isArray(required) || required.some((name) => typeof name !== 'string' || !Object.hasOwn(properties, name))) {
    return `${where} lists as required a name that is not one of its fields.`;
  }
  if (new Set(required).size !== required.length) return `${where} lists a required name twice.`;
  const rebuilt = objectRule(readObject(rule));
  const extra = Object.keys(rule).filter((key) => !Object.hasOwn(rebuilt, key) && !(key === 'properties' || key === 'required'));
  if (extra.length) return `${where} uses ${extra.map((key) => `"${key}"`).join(', ')}, which the builder has no control for.`;
  if (Array.isArray(rule.required) && rule.required.length === 0) return `${where} has an empty "required" list.`;
  if (rule.properties === undefined) return `${where} has no "properties".`;
  return null;
}

function readObject(rule: Record<string, unknown>): BuilderField[] {
  const properties = isObject(rule.properties) ? rule.properties : {};
  const required = new Set(Array.isArray(rule.required) ? rule.required : []);
  return Object.entries(properties).map(([name, child]) => readField(name, isObject(child) ? child : {}, required.has(name)));
}

function readField(name: string, rule: Record<string, unknown>, required: boolean): BuilderField {
  const kind = kindOf(rule);
  const limits = limitKeywords(kind);
  const numberAt = (key: string | undefined) => (key !== undefined && typeof rule[key] === 'number' ? rule[key] : null);
  return {
    name,
    kind,
    required,
    min: numberAt(limits?.min),
    max: numberAt(limits?.max),
    pattern: hasPattern(kind) && typeof rule.pattern === 'string' ? rule.pattern : null,
    choices: kind === 'choice' && Array.isArray(rule.enum) ? rule.enum.filter((choice): choice is string => typeof choice === 'string') : [],
    fields: kind === 'object' ? readObject(rule) : [],
  };
}

function kindOf(rule: Record<string, unknown>): BuilderKind {
  if (Array.isArray(rule.enum)) return 'choice';
  switch (rule.type) {
    case 'number':
    case 'integer':
    case 'boolean':
    case 'object':
      return rule.type;
    case 'array':
      return 'text-list';
    default: {
      const format = Object.entries(STRING_FORMATS).find(([, value]) => value === rule.format)?.[0] as BuilderKind | undefined;
      return format ?? (rule[LONG_TEXT_KEYWORD] === true ? 'long-text' : 'text');
    }
  }
}

/** What keeps the fields from being saved, each naming its field; empty when they can be. */
export function builderProblems(fields: BuilderField[], path = ''): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  fields.forEach((field, index) => {
    const label = field.name ? `${path}${field.name}` : `${path}field ${index + 1}`;
    if (!field.name.trim()) problems.push(`${label} needs a name.`);
    else if (seen.has(field.name)) problems.push(`${label} is named twice.`);
    seen.add(field.name);
    if (field.min !== null && field.max !== null && field.min > field.max) problems.push(`${label} has a minimum above its maximum.`);
    if (field.kind === 'choice' && field.choices.length === 0) problems.push(`${label} needs at least one choice.`);
    if (field.kind === 'choice' && new Set(field.choices).size !== field.choices.length) problems.push(`${label} lists a choice twice.`);
    if (field.pattern !== null && !validPattern(field.pattern)) problems.push(`${label} has a pattern that is not a regular expression.`);
    if (field.kind === 'object') problems.push(...builderProblems(field.fields, `${label}.`));
  });
  return problems;
}

function validPattern(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Equal as JSON, whatever the order of object keys and of `required` names. */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) {
    const items = value.map((item) => canonical(item));
    return key === 'required' ? [...items].sort() : items;
  }
  if (!isObject(value)) return value;
  return Object.keys(value)
    .sort()
    .map((name) => [name, canonical(value[name], name)] as const);
}
