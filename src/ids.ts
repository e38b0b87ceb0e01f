import { randomFillSync } from 'node:crypto';

/** Type prefixes of docs/design.md §2; the rest of an id is a lower-case ULID, so ids sort by creation time. */
export type IdPrefix =
  | 'ws' | 'per' | 'col' | 'rec' | 'sch' | 'fil' | 'key' | 'sa' | 'wh' | 'evt' | 'dlv' | 'att' | 'aud' | 'inv' | 'ses' | 'req' | 'imp';

/** Crockford's base32, lower-case: the ULID alphabet as our ids spell it. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** The 80 random bits of a ULID, kept as two 40-bit halves (exact in a double). */
const HALF = 2 ** 40;

/**
 * Random bytes are drawn from the system a pool at a time: asking for 10 bytes per millisecond
 * (or, as the `ulid` package does, one byte per character) made id generation a visible share
 * of every request's CPU time.
 */
const pool = Buffer.alloc(10 * 256);
let poolOffset = pool.length;

function randomHalf(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const value = pool.readUIntBE(poolOffset, 5);
  poolOffset += 5;
  return value;
}

function encode(value: number, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) {
    text = ALPHABET[value % 32]! + text;
    value = Math.floor(value / 32);
  }
  return text;
}

/**
 * A monotonic ULID generator (ulid/spec): 48 bits of milliseconds, then 80 random bits. Within one
 * millisecond (or if the clock steps back) the random part of its last id is incremented instead,
 * so ids made in the same millisecond still sort in the order they were made. Each generator
 * remembers only its own last id; the process makes every id with one.
 */
export function monotonicUlids(): (now: number) => string {
  let lastTime = -1;
  let high = 0;
  let low = 0;
  return (now) => {
    if (now > lastTime) {
      lastTime = now;
      high = randomHalf();
      low = randomHalf();
    } else if (++low === HALF) {
      low = 0;
      if (++high === HALF) throw new Error('cannot make another id in this millisecond: the random part overflowed');
    }
    return encode(lastTime, 10) + encode(high, 8) + encode(low, 8);
  };
}

const nextUlid = monotonicUlids();

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  return `${prefix}_${nextUlid(now)}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`);
}

/** Whether `a` was made before `b`: ids of any prefix order by creation time (ULIDs). */
export function madeBefore(a: string, b: string): boolean {
  return a.slice(a.indexOf('_') + 1) < b.slice(b.indexOf('_') + 1);
}

/**
 * The smallest id of this prefix that could have been made at `time` or later: every id made
 * from then on sorts at or after it, so it bounds a range read by time through an id index.
 */
export function firstIdAt(prefix: IdPrefix, time: number): string {
  return `${prefix}_${encode(Math.max(0, time), 10)}`;
}

/** How long every id of this prefix is: the prefix, `_` and a 26-character ULID. */
export const idLength = (prefix: IdPrefix): number => prefix.length + 1 + 26;
