/**
 * JSON Merge Patch (RFC 7386): objects merge key by key, `null` removes a key, anything else
 * (arrays included) replaces. This is what PATCH on a record applies to its data.
 *
 * Keys are the caller's: the result is built on a null-prototype object and read through own
 * properties only, so a key like `constructor`, `toString` or `__proto__` is a field like any
 * other and never reaches (or reads) Object.prototype.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Record<string, unknown> = Object.assign(Object.create(null), isPlainObject(target) ? target : {});
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value);
  }
  return result;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
