/** A whole-number bench setting from the environment, or `fallback` when unset. */
export function wholeNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number ≥ ${min} (got ${JSON.stringify(raw)})`);
  return value;
}

/** BENCH_ENGINES: a comma list of engines to measure, both by default; an unknown one stops the bench. */
export function benchEngines(): ('sqlite' | 'postgres')[] {
  const engines = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',').map((part) => part.trim()).filter(Boolean);
  for (const engine of engines) if (engine !== 'sqlite' && engine !== 'postgres') throw new Error(`BENCH_ENGINES: unknown engine "${engine}"`);
  return engines as ('sqlite' | 'postgres')[];
}

/**
 * BENCH_LOG_LEVEL: the log level of the servers that serve the measured requests; the product's
 * default (info, one line per request) unless set, so the figures are what a user gets.
 */
export function benchLogLevel(): string {
  return process.env.BENCH_LOG_LEVEL || 'info';
}
