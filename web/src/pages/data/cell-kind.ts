/** The input a cell is edited with. JSON (objects, lists) is edited in the record's own editor instead. */
export type CellKind = 'boolean' | 'integer' | 'number' | 'text' | 'choice';

/**
 * How a field is edited in its cell: from the active schema's property when there is one, else
 * from the value itself; null when the cell cannot be edited in place (an object, a list, a
 * property the schema gives no single type).
 */
export function cellKind(schema: unknown, key: string, value: unknown): { kind: CellKind; choices: unknown[] } | null {
  const properties = (schema as { properties?: unknown } | null | undefined)?.properties;
  if (properties && typeof properties === 'object' && Object.hasOwn(properties, key)) {
    const rule = ((properties as Record<string, unknown>)[key] ?? {}) as { type?: unknown; enum?: unknown };
    if (Array.isArray(rule.enum)) return rule.enum.every((choice) => choice === null || typeof choice !== 'object') ? { kind: 'choice', choices: rule.enum } : null;
    const types = (Array.isArray(rule.type) ? rule.type : [rule.type]).filter((type) => type !== 'null');
    if (types.length !== 1) return null;
    const type = types[0];
    if (type === 'boolean' || type === 'integer' || type === 'number') return { kind: type, choices: [] };
    return type === 'string' ? { kind: 'text', choices: [] } : null;
  }
  if (typeof value === 'boolean') return { kind: 'boolean', choices: [] };
  if (typeof value === 'number') return { kind: 'number', choices: [] };
  if (value === undefined || value === null || typeof value === 'string') return { kind: 'text', choices: [] };
  return null;
}
