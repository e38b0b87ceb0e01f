/** A whole-number bench setting from the environment, or `fallback` when unset. */
export function wholeNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number ≥ ${min} (got ${JSON.stringify(raw)})`);
  return value;
}
