import fc from 'fast-check';

/**
 * Generators of hostile HTTP requests for the property suite (hostile-input.property.test.ts):
 * what an outside tester throws at a route, built from the route table and the OpenAPI document
 * rather than from a list kept by hand, so a new route is fuzzed the day it is added.
 */

/**
 * JSON written as raw text: values JSON.stringify cannot write (1e400), keys a JS object literal
 * cannot hold as keys (__proto__), nesting deeper than any literal.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

/** Text that has broken something somewhere: NUL, lone surrogates, prototype names, huge numbers… */
export const NASTY_TEXT = [
  '', ' ', '\u0000', 'a\u0000b', '\ud800', '\udc00x', 'x\ud800', '\ud83d\ude00', '\ufeff', '\u202e', 'é', '\n', '\r\n', '\t', '"', '\\', '\\u0000',
  '%', '%00', '%FF', '%ED%A0%80', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '../..', '*', 'null', 'undefined',
  'NaN', 'Infinity', '-1', '0', '-0', '1e400', '99999999999999999999', '2147483648', '9007199254740993', 'x'.repeat(3000), '<script>alert(1)</script>',
  "' OR 1=1 --", '=HYPERLINK("x")', 'col_abc', 'rec_00000000000000000000000000', 'data.constructor.prototype.polluted', 'data.__proto__.x',
  '-createdAt,data.name', 'data.a = "\\u0000"', 'data.n > 1e400', '(((((((((((((((((((((', 'data.a ~ "' + 'a'.repeat(500) + '"', 'bytes=0-99999999999999999999',
];

const NASTY_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '', ' ', '\u0000', '\ud800', 'data', 'a.b', '$ref', 'polluted'];

const RAW_NUMBERS = ['1e400', '-1e400', '1e-400', '123456789012345678901234567890', '-0', '0.1e999999', '2147483648', '-2147483649', '9007199254740993'].map((text) => new RawJson(text));

export const nastyString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_TEXT) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
);

const nastyKey = fc.oneof(fc.constantFrom(...NASTY_KEYS), fc.string({ maxLength: 12 }));

const nastyScalar = fc.oneof(
  nastyString,
  fc.constantFrom(...RAW_NUMBERS),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);

/** Any JSON-ish value, a few levels deep, with prototype keys and raw numbers among the rest. */
export const nastyJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nastyScalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(nastyKey, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** JSON text of a value (RawNumber written as is); keys like __proto__ come out as plain keys. */
export function jsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value).map((key) => `${JSON.stringify(key)}:${jsonText((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * One kind of trouble per run, so each kind comes often enough to meet every route: the runs of
 * a route are few, and a value mixing every trouble at once is refused at the first.
 */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('\u0000', 'a\u0000b', '\u0000'.repeat(3), 'https://example.com/\u0000'),
  fc.constantFrom('\ud800', 'x\udc00', '\udbff\udbff', 'https://example.com/\ud800'),
  fc.constantFrom(
    new RawJson('{"__proto__":{"polluted":"yes"}}'),
    new RawJson('{"constructor":{"prototype":{"polluted":"yes"}}}'),
    new RawJson('{"a":{"__proto__":[1]}}'),
    new RawJson('{"toString":"x","hasOwnProperty":1,"valueOf":null}'),
  ),
  fc.constantFrom(...RAW_NUMBERS, 9007199254740993, -0, 1.7976931348623157e308, 5e-324),
  fc.constantFrom(101, 1_000, 20_000).chain((levels) => fc.boolean().map((arrays) => new RawJson(nestedText(levels, '1', arrays ? 'array' : 'object')))),
  fc.constantFrom([], {}, true, false, 0, 1, -1, 'x', '', null, [null], [[]], { '': '' }),
  fc.constantFrom('x'.repeat(70_000), '😀'.repeat(5_000), '\ufeff', '\u202etxt.exe', 'e\u0301', '=1+1', '-2+3', '@SUM(1)', '\t=x'),
  nastyJson,
);

/** The sample with some of its values (any depth) swapped for `value`: `coins` decide which. */
export function mutated(sample: unknown, value: unknown, coins: readonly boolean[]): unknown {
  let at = 0;
  const walk = (node: unknown): unknown => {
    if (at >= coins.length) return node;
    if (coins[at++]) return value;
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node === 'object' && node !== null && !(node instanceof RawJson)) {
      return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, walk(child)]));
    }
    return node;
  };
  // The top level itself is never swapped: its keys are what let the request reach the handler.
  if (typeof sample !== 'object' || sample === null) return value;
  return Object.fromEntries(Object.entries(sample).map(([key, child]) => [key, walk(child)]));
}

/** Text that makes any string it ends unstorable or suspect, for tainted(). */
export const TAINTS = ['\u0000', '\ud800', '\udfff', '\u0000\ud800', '\ufffe', '\u202e', '%00', '\\u0000'];

/**
 * The sample with `taint` added to the end of some of its strings (`coins` decide which, one
 * string after another), keys of free-form objects included: a NUL inside a URL that is
 * otherwise valid reaches further than a NUL alone, and one tainted field at a time gets past the
 * checks of the others.
 */
export function tainted(sample: unknown, taint: string, coins: readonly boolean[]): unknown {
  let at = 0;
  const flip = () => coins[at++ % coins.length]!;
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return flip() ? `${node}${taint}` : node;
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node === 'object' && node !== null) {
      return Object.fromEntries(Object.entries(node).map(([key, value]) => [!FREE_FORM_KEYS.has(key) && flip() ? `${key}${taint}` : key, walk(value)]));
    }
    return node;
  };
  return walk(sample);
}

/** Keys a route itself defines (tainting them only makes an unknown field); the others are the caller's. */
const FREE_FORM_KEYS = new Set(['data', 'schema', 'settings', 'url', 'events', 'collections', 'name', 'email', 'password', 'role', 'scopes', 'fields', 'unique',
  'fileId', 'personId', 'public', 'description', 'gracePeriodSeconds', 'expiresAt', 'serviceAccountId', 'mode', 'token']);

/** `levels` nested arrays or objects around `inner`. */
export const nestedText = (levels: number, inner: string, kind: 'array' | 'object') =>
  kind === 'array' ? `${'['.repeat(levels)}${inner}${']'.repeat(levels)}` : `${'{"a":'.repeat(levels)}${inner}${'}'.repeat(levels)}`;

/** Bodies that are not JSON, or not UTF-8, or only nearly JSON. */
export const RAW_BODIES: Buffer[] = [
  Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]),
  Buffer.from('{"data":{"a":"\xff"}}', 'latin1'),
  Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
  Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc0, 0x80]), Buffer.from('"}')]),
  Buffer.from('{"data":{'),
  Buffer.from('{"a":1,"a":2,"__proto__":{"polluted":"yes"}}'),
  Buffer.from('{"constructor":{"prototype":{"polluted":"yes"}}}'),
  Buffer.from('\ufeff{"name":"bom"}'),
  Buffer.from(' '.repeat(50_000)),
  Buffer.from('null'),
  Buffer.from('[]'),
  Buffer.from('"text"'),
  Buffer.from('name=x&data=1'),
  Buffer.from('--x\r\nContent-Disposition: form-data; name="file"; filename="a\u0000.txt"\r\n\r\nhello\r\n--x--\r\n'),
  Buffer.from(`{"data":${nestedText(20_000, '1', 'array')}}`),
  Buffer.from(`{"schema":${nestedText(3_000, '{}', 'object')}}`),
  Buffer.from(`${nestedText(101, '1', 'object')}\n{"ok":1}\n{"n":1e400}\n{"constructor":{"prototype":{"polluted":"yes"}}}\n`),
  Buffer.from('a,__proto__\n1,2\n'),
  Buffer.from('name,constructor\n"=cmd|\' /C calc\'!A0",x\n"unclosed\n'),
];

export const CONTENT_TYPES = [
  'application/json', 'application/json', 'application/json; charset=utf-8', 'application/json; charset=utf-16', 'application/json; charset="latin1"',
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/x-ndjson', 'text/csv', 'text/csv; charset=utf-8',
  'application/xml', 'image/png', 'application/octet-stream', 'application/merge-patch+json', '*/*', 'application/json; boundary=x; charset=utf-8; a',
];

/** Query field names: each route's own, the ones other routes know, and nasty ones. */
export const QUERY_NAMES = [
  'limit', 'cursor', 'filter', 'sort', 'fields', 'trashed', 'count', 'permanent', 'format', 'mode', 'name', 'download', 'contents', 'state',
  'eventType', 'actor', 'action', 'since', 'until', '__proto__', 'constructor', 'prototype', 'a[b]', 'limit[]', '',
];

export const QUERY_VALUES = fc.oneof(
  nastyString,
  fc.constantFrom('1', '50', '1000', '1001', '0', '-1', 'true', 'false', 'csv', 'ndjson', 'partial', 'all', 'data.name', '-data.a,id', 'data.a = 1 && data.b != null', 'data.tags in [1, "x", null]'),
);

export const HEADER_VALUES = fc.oneof(
  fc.constantFrom('', ' ', 'bytes=0-99999999999999999999', 'bytes=-99999999999999999999', 'bytes=5-1', 'bytes=0-0,2-3', 'items=0-1', '"1"', 'W/"1"', '*', '"2", "3"',
    'x'.repeat(8000), 'null', '%00', '\u00e9', 'https://evil.example', 'ws_00000000000000000000000000', 'evt_00000000000000000000000000', '1e400', '-1'),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((text) => text.replace(/[\u0000-\u001f\u007f]/g, '')),
);

export const HEADER_NAMES = ['range', 'if-range', 'if-none-match', 'if-match', 'idempotency-key', 'origin', 'accept', 'last-event-id', 'x-forwarded-for', 'content-encoding'];

/**
 * A plausible value for a JSON Schema (from the OpenAPI document): the route's own body shape,
 * so that generated mutations reach past validation into the handlers. `pick` offers known
 * values (a real collection, a receiver's URL…) by the property's name or for a pattern.
 */
export function sampleOf(schema: any, pick: (name: string, pattern?: RegExp) => unknown, name = ''): unknown {
  if (!schema || typeof schema !== 'object') return null;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const union of [schema.anyOf, schema.oneOf]) {
    if (Array.isArray(union) && union.length > 0) return sampleOf(union.find((option: any) => option.type !== 'null') ?? union[0], pick, name);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      // A free-form object (record data, a schema): something with fields of each kind to swap.
      if (!schema.properties) return { name: 'fuzz', n: 1, ok: true, tags: ['a', 'b'], nested: { city: 'Paris', zip: 75001 } };
      const result: Record<string, unknown> = {};
      for (const [key, property] of Object.entries<any>(schema.properties)) result[key] = sampleOf(property, pick, key);
      return result;
    }
    case 'array':
      return [sampleOf(schema.items, pick, name)];
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'string': {
      const known = pick(name, schema.pattern ? new RegExp(schema.pattern, 'u') : undefined);
      if (known !== undefined) return known;
      if (schema.format === 'email') return 'fuzz@example.com';
      if (schema.format === 'date-time') return '2027-01-01T00:00:00.000Z';
      return 'fuzzed';
    }
    default:
      return {};
  }
}
