import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { newId } from '../src/ids.js';
import baseX from 'base-x';
import { checksumDigits, hashToken, issueToken, parseToken, previewOf, TOKEN_PATTERN } from '../src/modules/keys/token.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Every character a token may hold, plus a few it may not. */
const ALPHABET = `${BASE62}_-. ~é\u0000`;

/** The regular expression docs/api-keys.md gives to secret scanners, read from the page itself. */
function documentedScannerRegex(): RegExp {
  const doc = fs.readFileSync(new URL('../docs/api-keys.md', import.meta.url), 'utf8');
  const match = /<!-- scanner-regex -->\s*```\w*\n(.+)\n```/.exec(doc);
  if (!match) throw new Error('docs/api-keys.md has no scanner regex block (marked <!-- scanner-regex -->)');
  return new RegExp(match[1]!.trim(), 'g');
}

describe('API key tokens', () => {
  it('have the documented format: pb_{live|test}_{26 lowercase base32}_{49 base62}', () => {
    for (const mode of ['live', 'test'] as const) {
      const id = newId('key');
      const token = issueToken(mode, id);
      expect(token).toMatch(/^pb_(live|test)_[0-9a-z]{26}_[0-9A-Za-z]{49}$/);
      expect(token).toMatch(TOKEN_PATTERN);
      expect(token.startsWith(`pb_${mode}_${id.slice('key_'.length)}_`)).toBe(true);
      // The kid is a lower-case ULID: Crockford base32, which has no i, l, o or u.
      expect(token.split('_')[2]).toMatch(/^[0-9a-hjkmnp-tv-z]{26}$/);
      expect(parseToken(token)).toEqual({ mode, keyId: id });
    }
  });

  it('carry at least 256 random bits: 43 base62 characters that differ from token to token', () => {
    const id = newId('key');
    const secrets = new Set<string>();
    const seen = Array.from({ length: 43 }, () => new Set<string>());
    for (let i = 0; i < 2000; i++) {
      const secret = issueToken('live', id).split('_')[3]!.slice(0, 43);
      expect(secret).toMatch(/^[0-9A-Za-z]{43}$/);
      secrets.add(secret);
      [...secret].forEach((char, at) => seen[at]!.add(char));
    }
    expect(secrets.size).toBe(2000);
    // 43 base62 characters hold 43·log2(62) ≈ 256.03 bits; 32 random bytes fill them.
    expect(43 * Math.log2(62)).toBeGreaterThanOrEqual(256);
    // Every position but the first (which holds the top bits of the number) takes many values.
    for (const chars of seen.slice(1)) expect(chars.size).toBeGreaterThan(55);
    expect(seen[0]!.size).toBeGreaterThan(1);
  });

  it('refuse any single changed character, anywhere in the token (checksum or format)', () => {
    for (const mode of ['live', 'test'] as const) {
      const token = issueToken(mode, newId('key'));
      let tried = 0;
      for (let at = 0; at < token.length; at++) {
        for (const replacement of ALPHABET) {
          if (replacement === token[at]) continue;
          const changed = token.slice(0, at) + replacement + token.slice(at + 1);
          expect(parseToken(changed), `${changed} (position ${at})`).toBeNull();
          tried++;
        }
      }
      expect(tried).toBeGreaterThan(token.length * 60);
    }
  });

  it('refuse truncated, extended, swapped-mode and wrapped tokens', () => {
    const token = issueToken('live', newId('key'));
    expect(parseToken(token.slice(0, -1))).toBeNull();
    expect(parseToken(`${token}0`)).toBeNull();
    expect(parseToken(token.replace('pb_live_', 'pb_test_'))).toBeNull();
    expect(parseToken(` ${token}`)).toBeNull();
    expect(parseToken(`${token}\n`)).toBeNull();
    expect(parseToken(`Bearer ${token}`)).toBeNull();
    expect(parseToken(token.toUpperCase())).toBeNull();
    // Two adjacent characters swapped (the commonest typo) are caught too.
    for (let at = 0; at < token.length - 1; at++) {
      if (token[at] === token[at + 1]) continue;
      const swapped = token.slice(0, at) + token[at + 1] + token[at] + token.slice(at + 2);
      expect(parseToken(swapped), `swap at ${at}`).toBeNull();
    }
  });

  it('never throw on garbage: thousands of random strings, near-misses and odd inputs', () => {
    const random = (length: number, chars: string) => Array.from(randomBytes(length), (byte) => chars[byte % chars.length]).join('');
    const valid = issueToken('test', newId('key'));
    const inputs: string[] = ['', '_', 'pb_', 'pb_live_', 'pb_live__', 'pb_live_' + '_'.repeat(80), '\u0000', '\uD800', '😀'.repeat(40), 'x'.repeat(1_000_000)];
    for (let i = 0; i < 3000; i++) {
      const length = i % 120;
      inputs.push(random(length, ALPHABET));
      inputs.push(`pb_live_${random(26, '0123456789abcdefghijklmnopqrstuvwxyz')}_${random(49, BASE62)}`);
      const mutated = valid.slice(0, i % valid.length) + random(3, ALPHABET) + valid.slice((i % valid.length) + 3);
      if (mutated !== valid) inputs.push(mutated);
      inputs.push(randomBytes(length).toString('latin1'));
    }
    let accepted = 0;
    for (const input of inputs) {
      expect(() => parseToken(input)).not.toThrow();
      if (parseToken(input)) accepted++;
    }
    // A random string of the right shape passes a 32-bit checksum about once in four billion.
    expect(accepted).toBe(0);
  });

  it('hash to SHA-256 without a pepper and HMAC-SHA-256 with one; never the token itself', () => {
    const token = issueToken('live', newId('key'));
    expect(hashToken(token, null)).toBe(createHash('sha256').update(token).digest('hex'));
    const peppered = hashToken(token, 'pepper');
    expect(peppered).toMatch(/^[0-9a-f]{64}$/);
    expect(peppered).not.toBe(hashToken(token, null));
    expect(peppered).not.toBe(hashToken(token, 'other pepper'));
    expect(hashToken(token, 'pepper')).toBe(peppered);
  });

  it('preview shows the prefix, the kid and the last four characters, never the secret', () => {
    const id = newId('key');
    const token = issueToken('test', id);
    const preview = previewOf(token);
    expect(preview).toBe(`pb_test_${id.slice('key_'.length)}_…${token.slice(-4)}`);
    const secret = token.split('_')[3]!.slice(0, 43);
    for (let at = 0; at + 8 <= secret.length; at++) expect(preview).not.toContain(secret.slice(at, at + 8));
  });

  it('are found by the scanner regex documented in docs/api-keys.md, in text and only whole', () => {
    const regex = documentedScannerRegex();
    const tokens = [issueToken('live', newId('key')), issueToken('test', newId('key'))];
    const text = `export PLAINBASE_KEY="${tokens[0]}"\nconfig = {'key': '${tokens[1]}'}\nnot a key: pb_live_short_abc`;
    expect([...text.matchAll(regex)].map((m) => m[0])).toEqual(tokens);
    for (let i = 0; i < 200; i++) {
      const token = issueToken(i % 2 ? 'live' : 'test', newId('key'));
      expect([...` ${token} `.matchAll(regex)].map((m) => m[0])).toEqual([token]);
    }
    // A longer run of the same characters is not a token.
    expect([...`${tokens[0]}A`.matchAll(regex)]).toEqual([]);
  });

  it('agree with the offline checksum check documented in docs/api-keys.md', () => {
    const doc = fs.readFileSync(new URL('../docs/api-keys.md', import.meta.url), 'utf8');
    const code = /<!-- offline-check -->\s*```js\n([\s\S]+?)```/.exec(doc)?.[1];
    if (!code) throw new Error('docs/api-keys.md has no offline check block (marked <!-- offline-check -->)');
    const body = code.replace(/^import .*$/m, '');
    const isPlainbaseToken = new Function('crc32', `${body}\nreturn isPlainbaseToken;`)(crc32) as (token: string) => boolean;
    for (let i = 0; i < 500; i++) {
      const token = issueToken(i % 2 ? 'live' : 'test', newId('key'));
      expect(isPlainbaseToken(token)).toBe(true);
      const changed = token.slice(0, -1) + (token.endsWith('0') ? '1' : '0');
      expect(isPlainbaseToken(changed)).toBe(parseToken(changed) !== null);
    }
  });

  it('write the checksum as base-x writes the CRC32\'s 4 bytes (how tokens were issued first), leading zero bytes included', () => {
    const base62 = baseX(BASE62);
    const asBytes = (crc: number) => base62.encode(Buffer.from(crc.toString(16).padStart(8, '0'), 'hex')).padStart(6, '0');
    const edges = [0, 1, 61, 62, 255, 256, 0xffff, 0x10000, 62 ** 3 - 1, 62 ** 3, 0xffffff, 0x1000000, 62 ** 4, 62 ** 5 - 1, 62 ** 5, 0x7fffffff, 0x80000000, 0xffffffff];
    const random = Array.from({ length: 20_000 }, () => randomBytes(4).readUInt32BE(0) >>> (randomBytes(1)[0]! % 32));
    for (const crc of [...edges, ...random]) expect(checksumDigits(crc), String(crc)).toBe(asBytes(crc));
  });
});
