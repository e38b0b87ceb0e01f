import { KIND_LABELS, fieldsOfSchema, sameJson, type BuilderField } from './schema-builder-fields.js';

/**
 * What changed between two schema versions, field by field (nested fields by their dotted path):
 * fields added, removed, and changed with each change in words. Read from the JSON Schema itself,
 * so it works for any schema; the builder's words are used where the builder can read a rule.
 */
export interface SchemaDiff {
  added: { path: string; summary: string }[];
  removed: { path: string; summary: string }[];
  changed: { path: string; changes: string[] }[];
}

type Rule = Record<string, unknown>;

export function diffSchemas(before: unknown, after: unknown): SchemaDiff {
  const diff: SchemaDiff = { added: [], removed: [], changed: [] };
  compareObjects(asRule(before), asRule(after), '', diff);
  return diff;
}

export const isEmptyDiff = (diff: SchemaDiff): boolean => diff.added.length + diff.removed.length + diff.changed.length === 0;

function compareObjects(before: Rule, after: Rule, path: string, diff: SchemaDiff): void {
  const beforeProperties = asRule(before.properties);
  const afterProperties = asRule(after.properties);
  const beforeRequired = requiredNames(before);
  const afterRequired = requiredNames(after);
  // Whatever is not a field (additionalProperties, $defs, …) is compared as one rule of the object itself.
  const ownChanges = keywordChanges(withoutFields(before), withoutFields(after));
  if (ownChanges.length) diff.changed.push({ path: path || '(the record itself)', changes: ownChanges });
  for (const [name, rule] of Object.entries(afterProperties)) {
    const childPath = path ? `${path}.${name}` : name;
    if (!Object.hasOwn(beforeProperties, name)) {
      diff.added.push({ path: childPath, summary: describe(name, asRule(rule), afterRequired.has(name)) });
      continue;
    }
    const old = asRule(beforeProperties[name]);
    const now = asRule(rule);
    const changes: string[] = [];
    if (beforeRequired.has(name) !== afterRequired.has(name)) changes.push(afterRequired.has(name) ? 'now required' : 'no longer required');
    const nested = old.type === 'object' && now.type === 'object';
    const oldKind = kindWords(name, old);
    const newKind = kindWords(name, now);
    if (oldKind !== newKind) changes.push(`kind ${oldKind} → ${newKind}`);
    else changes.push(...keywordChanges(nested ? withoutFields(old) : old, nested ? withoutFields(now) : now));
    if (changes.length) diff.changed.push({ path: childPath, changes });
    if (nested) compareObjects(old, now, childPath, diff);
  }
  for (const [name, rule] of Object.entries(beforeProperties)) {
    if (!Object.hasOwn(afterProperties, name)) diff.removed.push({ path: path ? `${path}.${name}` : name, summary: describe(name, asRule(rule), beforeRequired.has(name)) });
  }
}

/** Each keyword whose value differs, as "maxLength 10 → 20" (or "(none)" on the side without it). */
function keywordChanges(before: Rule, after: Rule): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return keys
    .filter((key) => !sameJson(before[key], after[key]))
    .map((key) => `${key} ${shown(before, key)} → ${shown(after, key)}`);
}

const shown = (rule: Rule, key: string) => (Object.hasOwn(rule, key) ? JSON.stringify(rule[key]) : '(none)');

function describe(name: string, rule: Rule, required: boolean): string {
  return `${kindWords(name, rule)}${required ? ', required' : ''}`;
}

/** The builder's name for the rule's kind ("Long text"), or its type as JSON when the builder cannot read it. */
function kindWords(name: string, rule: Rule): string {
  const reading = fieldsOfSchema({ type: 'object', properties: { [name]: rule } });
  const field: BuilderField | undefined = reading.fields?.[0];
  if (field) return KIND_LABELS[field.kind];
  return rule.type === undefined ? 'any' : JSON.stringify(rule.type);
}

function withoutFields(rule: Rule): Rule {
  const { properties: _properties, required: _required, ...rest } = rule;
  return rest;
}

function requiredNames(rule: Rule): Set<string> {
  return new Set(Array.isArray(rule.required) ? rule.required.filter((name): name is string => typeof name === 'string') : []);
}

function asRule(value: unknown): Rule {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Rule) : {};
}
