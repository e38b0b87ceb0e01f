import { createHmac, hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import baseX from 'base-x';

/**
 * API key tokens (docs/design.md §3): `pb_{live|test}_{kid}_{secret}{crc}`.
 * - kid: the key's id without `key_` (safe to log and show);
 * - secret: 256 random bits in base62 (43 characters);
 * - crc: CRC32 of everything before it, 6 base62 characters, so a mistyped or truncated token is
 *   refused before any database work, and secret scanners can check a match offline.
 */
export type KeyMode = 'live' | 'test';

const BASE62_DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const base62 = baseX(BASE62_DIGITS);
const SECRET_BYTES = 32;
const SECRET_LENGTH = 43;
const CRC_LENGTH = 6;

/** Also the pattern for secret scanners (docs/api-keys.md). */
export const TOKEN_PATTERN = /^pb_(live|test)_([0-9a-z]{26})_([0-9A-Za-z]{49})$/;

/**
 * The CRC32 of `body` in base62, padded with '0' to 6 characters. It runs on every request with a
 * key, so it divides the number rather than base-x encoding its 4 bytes; both give the same
 * characters (base-x writes a leading zero byte as a '0', which the padding supplies anyway, and
 * 2^32 fits in 6 base62 digits), so tokens issued before keep their checksum
 * (test/key-token.test.ts compares the two).
 */
function checksum(body: string): string {
  return checksumDigits(crc32(body));
}

/** A CRC32 value (0 ≤ value < 2^32) as checksum characters; exported for its test. */
export function checksumDigits(crc: number): string {
  let value = crc;
  let digits = '';
  while (value > 0) {
    digits = BASE62_DIGITS[value % 62]! + digits;
    value = Math.floor(value / 62);
  }
  return digits.padStart(CRC_LENGTH, '0');
}

export function issueToken(mode: KeyMode, keyId: string): string {
  const body = `pb_${mode}_${keyId.slice('key_'.length)}_${base62.encode(randomBytes(SECRET_BYTES)).padStart(SECRET_LENGTH, '0')}`;
  return body + checksum(body);
}

export interface ParsedToken {
  mode: KeyMode;
  keyId: string;
}

/** The key id of a well-formed token whose checksum holds; null for anything else. */
export function parseToken(token: string): ParsedToken | null {
  const match = TOKEN_PATTERN.exec(token);
  if (!match) return null;
  const body = token.slice(0, -CRC_LENGTH);
  if (checksum(body) !== token.slice(-CRC_LENGTH)) return null;
  return { mode: match[1] as KeyMode, keyId: `key_${match[2]}` };
}

/** What is stored: HMAC-SHA-256 with the server's pepper, or SHA-256 where none is configured. */
export function hashToken(token: string, pepper: string | null): string {
  return pepper ? createHmac('sha256', pepper).update(token).digest('hex') : hash('sha256', token, 'hex');
}

/** Enough of the token to recognise it in a list, never enough to use it. */
export function previewOf(token: string): string {
  const kidEnd = token.indexOf('_', 'pb_live_'.length);
  return `${token.slice(0, kidEnd + 1)}…${token.slice(-4)}`;
}
