import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// scrypt with N=2^cost (Config.passwordHashCost), r=8, p=1. Verifying reads the parameters from
// the stored hash, so a hash made at another cost still verifies.
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_LENGTH = 32;
const MAX_MEMORY = 64 * 1024 * 1024;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { ...options, maxmem: MAX_MEMORY }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** `cost` is log2 of scrypt's N. Stored form: `scrypt$N$r$p$salt$hash`, base64url parts, so parameters can change later. */
export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const parameters = { N: 2 ** cost, r: BLOCK_SIZE, p: PARALLELISM };
  const key = await derive(password, salt, parameters);
  return ['scrypt', parameters.N, parameters.r, parameters.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

// Verified against when the email is unknown, so both failures cost the same time.
// Made at the cost real people's hashes are made at.
let decoy: Promise<string> | undefined;
export function decoyPasswordHash(cost: number): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'), cost);
  return decoy;
}
