import { FAST_PATHS } from '../config.js';

/**
 * The fast paths that can be turned off, to measure what each earns against the plain way in the
 * same run (bench:data with BENCH_SLOW_PATHS) and to hold both to the same answers in tests.
 * PLAINBASE_SLOW_PATHS is a comma list of the paths to turn off; unset, every path is on.
 * - key-guess: a request with a key starts on this process's last reading of the key, its
 *   statements carrying the key guard (modules/keys/key-guess.ts; PostgreSQL).
 * - remembered-collection: a list (and a one-statement create) trusts the collection this process
 *   last found under the same name, its statement carrying the collection guard
 *   (collections/remembered-collections.ts; PostgreSQL).
 * - one-statement-create: a create is one statement (records/one-statement-create.ts; PostgreSQL).
 * - group-commit: SQLite writes that arrive together share one commit (db/group-commit.ts).
 */
export type FastPath = (typeof FAST_PATHS)[number];

let turnedOff = parse(process.env.PLAINBASE_SLOW_PATHS ?? '');

function parse(list: string): Set<FastPath> {
  const names = list.split(',').map((name) => name.trim()).filter(Boolean);
  for (const name of names) if (!FAST_PATHS.includes(name as FastPath)) throw new Error(`PLAINBASE_SLOW_PATHS: unknown fast path "${name}" (known: ${FAST_PATHS.join(', ')})`);
  return new Set(names as FastPath[]);
}

export const fastPathOn = (path: FastPath): boolean => !turnedOff.has(path);

/** For tests: turns off exactly these paths (none: all on), in this process. */
export function setSlowPaths(paths: readonly FastPath[]): void {
  turnedOff = new Set(paths);
}
