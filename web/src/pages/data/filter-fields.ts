/** A data key the filter syntax can name (docs/queries.md): letters, digits, _, not starting with a digit. */
const NAMEABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Enough to hint at; the hint is not a schema browser. */
const MAX_FIELDS = 8;

/**
 * The data fields a filter on this collection can name: the active schema's top-level properties
 * when there is one, else the keys of the records loaded, in the order first seen.
 */
export function filterFields(schema: unknown, records: readonly { data: Record<string, unknown> }[]): string[] {
  const properties = (schema as { properties?: unknown } | null | undefined)?.properties;
  const keys = new Set<string>();
  if (properties && typeof properties === 'object') {
    for (const key of Object.keys(properties)) keys.add(key);
  } else {
    for (const record of records) for (const key of Object.keys(record.data)) keys.add(key);
  }
  return [...keys].filter((key) => NAMEABLE.test(key)).slice(0, MAX_FIELDS);
}
