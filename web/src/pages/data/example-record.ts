/**
 * A record's data to show in an example: one value of the right type for each property of the
 * active schema (its first enum value or example where it has one), or a placeholder field when
 * the collection has no schema.
 */
export function exampleRecord(schema: unknown): Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, unknown> } | null | undefined)?.properties;
  if (!properties || typeof properties !== 'object' || Object.keys(properties).length === 0) return { name: 'Ada' };
  return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, exampleValue(property)]));
}

function exampleValue(property: unknown): unknown {
  const rule = (property ?? {}) as { type?: unknown; enum?: unknown[]; examples?: unknown[]; default?: unknown; minimum?: unknown; format?: unknown };
  if (Array.isArray(rule.examples) && rule.examples.length) return rule.examples[0];
  if (Array.isArray(rule.enum) && rule.enum.length) return rule.enum[0];
  if (rule.default !== undefined) return rule.default;
  const type = Array.isArray(rule.type) ? rule.type.find((candidate) => candidate !== 'null') : rule.type;
  switch (type) {
    case 'integer':
    case 'number':
      return typeof rule.minimum === 'number' ? Math.max(rule.minimum, 1) : 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    case 'null':
      return null;
    default:
      return rule.format === 'email' ? 'ada@example.com' : rule.format === 'date-time' ? new Date(0).toISOString() : 'text';
  }
}
