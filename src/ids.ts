import { monotonicFactory } from 'ulid';

/** Type prefixes of DESIGN.md §2; the rest of an id is a lower-case ULID, so ids sort by creation time. */
export type IdPrefix =
  | 'ws' | 'per' | 'col' | 'rec' | 'sch' | 'fil' | 'key' | 'sa' | 'wh' | 'evt' | 'dlv' | 'att' | 'aud' | 'inv' | 'req';

const nextUlid = monotonicFactory();

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  return `${prefix}_${nextUlid(now).toLowerCase()}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`);
}

/** Whether `a` was made before `b`: ids of any prefix order by creation time (ULIDs). */
export function madeBefore(a: string, b: string): boolean {
  return a.slice(a.indexOf('_') + 1) < b.slice(b.indexOf('_') + 1);
}
